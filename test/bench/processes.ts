/** A server under test, in a process of its own: how long it took to serve, and its peak memory. */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/paths';
import { freePort } from '../support/free-port';

export interface ServerProcess {
  url: string;
  pid: number;
  /** From spawning the process to its first 200 from /readyz. */
  readyMs: number;
  /** The most resident memory the process has held since it started (VmHWM), in MB. */
  peakRssMb(): number;
  /** CPU time the process has used so far (user and system), in seconds. */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

/** CPU seconds (user and system) a process has used so far, from /proc (clock ticks, 100 a second on Linux). */
export function cpuSecondsOf(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * Node's arguments for the service exactly as `npm start` runs it: its flags and entry point (of
 * this checkout, or of the built checkout at `root`).
 * With BENCH_CPU_PROF=folder, each service also writes a CPU profile of each of its threads
 * there when it stops (node --cpu-prof, which NODE_OPTIONS does not take).
 */
export function serviceArguments(root = projectRoot): string[] {
  const { scripts } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  // A checkout from before the script ran node with exec has no exec in it.
  const command = /&& (?:exec )?node (.+)$/.exec(scripts.start)?.[1];
  if (command === undefined)
    throw new Error(`cannot read the node command in the start script: ${scripts.start}`);
  const profile = process.env.BENCH_CPU_PROF;
  return [
    ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []),
    ...command.split(' ').map((arg) => (arg.startsWith('-') ? arg : path.join(root, arg))),
  ];
}

/**
 * The environment of a service that delivers webhooks to loopback, its names from the name server
 * at `dnsServers` (test/support/name-server.ts), with no rate limit and warnings only logged.
 */
export const webhookServiceEnv = (databaseUrl: string, dnsServers: string) => ({
  DATABASE_URL: databaseUrl,
  RATE_LIMIT_PER_MINUTE: '0',
  LOG_LEVEL: 'warn',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_DNS_SERVERS: dnsServers,
});

/** How a server is started beside its environment: under another program (valgrind, say). */
export interface StartOptions {
  /** A command and its arguments that run node (`valgrind --tool=callgrind`): it must exec it. */
  wrap?: string[];
  env?: Record<string, string>;
  /** How long it may take to answer /readyz before the start counts as failed (60 s). */
  readyWithinMs?: number;
}

/** Starts `node ...nodeArguments` with the environment and a free PORT; resolves once /readyz answers 200. */
export async function startServerProcess(
  nodeArguments: string[],
  env: Record<string, string>,
  options: StartOptions = {},
): Promise<ServerProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const [command, ...args] = [...(options.wrap ?? []), process.execPath, ...nodeArguments];
  const child = spawn(command, args, {
    // No lookup leaves the machine: nothing listens on port 1 (a bench that needs names runs a name server).
    env: {
      ...process.env,
      WEBHOOK_DNS_SERVERS: '127.0.0.1:1',
      ...env,
      ...options.env,
      PORT: String(port),
      HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = started + (options.readyWithinMs ?? 60_000);
  for (;;) {
    if (gone) throw new Error(`${nodeArguments.join(' ')} exited before it was ready`);
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${nodeArguments.join(' ')} was not ready within ${deadline - started} ms`);
    }
    const ready = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const readyMs = performance.now() - started;
  return {
    url,
    pid: child.pid!,
    readyMs,
    peakRssMb() {
      const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024;
    },
    cpuSeconds: () => cpuSecondsOf(child.pid!),
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
