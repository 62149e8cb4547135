/**
 * Runs a compiled CLI to its end without blocking this process, which may serve the API it calls:
 * a blocked server could not answer, and its idle keep-alive connections would time out under the
 * client's next request.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

export function runCli(entryPoint: string, args: string[], env: NodeJS.ProcessEnv) {
  return promisify(execFile)(process.execPath, [entryPoint, ...args], {
    env,
    encoding: 'utf8',
  }).then(
    ({ stdout, stderr }) => ({ status: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      status: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );
}
