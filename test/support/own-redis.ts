/**
 * A Redis server of the test's own, on a port of its own, with nothing saved to disk, so it
 * can be stopped, frozen and started again without touching the machine's shared Redis.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createClient } from 'redis';
import { freePort } from './free-port';

export const redisServer = process.env.REDIS_SERVER_PATH || 'redis-server';

export class OwnRedis {
  private child?: ChildProcess;
  private constructor(readonly port: number) {}

  /** A server on a free port; not running until start(). */
  static async create(): Promise<OwnRedis> {
    return new OwnRedis(await freePort());
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(
      redisServer,
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    this.child = child;
    const deadline = Date.now() + 10_000;
    while ((await this.ping()) === false) {
      if (child.exitCode !== null) throw new Error(`${redisServer} exited with ${child.exitCode}`);
      if (Date.now() > deadline)
        throw new Error(`${redisServer} did not answer on port ${this.port}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Kills the server: its counts are gone, as after a crash. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** Stops the process where it is (SIGSTOP): connections stay open and nothing answers. */
  freeze(): void {
    this.child!.kill('SIGSTOP');
  }

  thaw(): void {
    this.child!.kill('SIGCONT');
  }

  /** The keys matching the pattern (KEYS: fine for the few a test makes). */
  async keys(pattern: string): Promise<string[]> {
    return this.withClient((client) => client.keys(pattern));
  }

  private async ping(): Promise<boolean> {
    return this.withClient(async (client) => (await client.ping()) === 'PONG').catch(() => false);
  }

  private async withClient<T>(use: (client: Client) => Promise<T>): Promise<T> {
    const client = await connectClient(this.url);
    try {
      return await use(client);
    } finally {
      client.destroy();
    }
  }
}

async function connectClient(url: string) {
  const client = createClient({ url, socket: { connectTimeout: 1000, reconnectStrategy: false } });
  client.on('error', () => {});
  await client.connect();
  return client;
}

type Client = Awaited<ReturnType<typeof connectClient>>;
