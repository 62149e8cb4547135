/**
 * The service as `npm start` runs it (the compiled entry point) in a process of its own, so a
 * test can signal or kill it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import type { DatabaseConfig } from '../../src/config';
import { projectRoot } from '../../src/paths';

const entryPoint = path.join(projectRoot, 'dist', 'src', 'cli', 'serve.js');

export function databaseUrl(config: DatabaseConfig): string {
  return config.client === 'sqlite' ? `sqlite:${config.filename}` : config.url;
}

export interface ServiceProcess {
  child: ChildProcess;
  /** The base URL, without `/v1`. */
  url: string;
  /** Its JSON log lines so far. */
  lines: Array<Record<string, any>>;
}

/** `node dist/src/cli/serve.js` on a free port (run under `runUnder`, a command such as `setpriv` and its options), once it says it is serving. */
export async function serveProcess(
  database: DatabaseConfig,
  env: Record<string, string> = {},
  runUnder: string[] = [],
): Promise<ServiceProcess> {
  const [command, ...args] = [...runUnder, process.execPath, entryPoint];
  const child = spawn(command, args, {
    // Limits no test reaches, as in the in-process tests' configuration: the tests send from one address.
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl(database),
      PORT: '0',
      RATE_LIMIT_PER_MINUTE: '0',
      MAX_CONNECTIONS_PER_ADDRESS: '1000',
      LONG_POLLS_PER_KEY: '1000',
      LONG_POLLS_PER_TENANT: '1000',
      // Nothing listens there: no lookup leaves the machine.
      WEBHOOK_DNS_SERVERS: '127.0.0.1:1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: Array<Record<string, any>> = [];
  const url = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line);
      lines.push(entry);
      if (entry.msg === 'task-tracker serving') resolve(entry.url.replace(/\/v1$/, ''));
    });
    // With what it logged last, which says why ('close': once its output has all been read).
    child.once('close', (code) =>
      reject(
        new Error(
          `the service exited with ${code} before serving; it logged last: ${JSON.stringify(lines.slice(-3))}`,
        ),
      ),
    );
  });
  return { child, url, lines };
}

/** SIGKILL, as a crash would: no shutdown, no answers to what is in flight. */
export function killHard(child: ChildProcess): Promise<void> {
  return signalAndWait(child, 'SIGKILL');
}

/** SIGTERM, as a deployment's stop: the instance finishes what is in flight, then exits. */
export function stopGracefully(child: ChildProcess): Promise<void> {
  return signalAndWait(child, 'SIGTERM');
}

async function signalAndWait(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}
