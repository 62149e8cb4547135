/**
 * Prism (the mock server and validating proxy of @stoplight/prism-cli), started for a test on a
 * free port from the project's own document.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { freePort } from './free-port';
import { openapiDocumentPath, projectRoot } from '../../src/paths';

export interface RunningPrism {
  url: string;
  stop(): Promise<void>;
}

/** `prism mock [--dynamic]` or `prism proxy UPSTREAM --errors`, once it answers. */
export async function startPrism(
  mode: { mock: 'static' | 'dynamic' } | { proxyTo: string },
  /** The document served: the newest version's unless another's is named. */
  document: string = openapiDocumentPath,
): Promise<RunningPrism> {
  const port = await freePort();
  const modeArgs =
    'mock' in mode
      ? ['mock', ...(mode.mock === 'dynamic' ? ['--dynamic'] : [])]
      : ['proxy', '--errors'];
  const args = [
    modeArgs[0],
    document,
    ...('proxyTo' in mode ? [mode.proxyTo] : []),
    ...modeArgs.slice(1),
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
  ];
  const child = spawn(path.join(projectRoot, 'node_modules', '.bin', 'prism'), args, {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30000;
  for (;;) {
    try {
      await fetch(`${url}/v1/projects`);
      break;
    } catch {
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`prism ${args.join(' ')} did not start:\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
