/**
 * A MariaDB server of the test's own: a new data directory, its own port and socket, so it can
 * be killed and restarted without touching the machine's shared server.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { freeServerPort } from './free-port';

export const mariadbd = process.env.MARIADBD_PATH || '/usr/sbin/mariadbd';

export class OwnMariaDb {
  private child?: ChildProcess;
  private constructor(
    readonly dataDir: string,
    readonly port: number,
    private readonly serverOptions: readonly string[],
  ) {}

  /** `serverOptions` go to mariadbd after the test's own (`--sql-mode=...`), at every start. */
  static async create(serverOptions: readonly string[] = []): Promise<OwnMariaDb> {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-mariadb-'));
    const installed = spawnSync(
      'mariadb-install-db',
      [
        '--no-defaults',
        `--datadir=${dataDir}`,
        '--user=root',
        '--skip-test-db',
        '--auth-root-authentication-method=normal',
      ],
      { encoding: 'utf8' },
    );
    if (installed.status !== 0) throw new Error(`mariadb-install-db failed:\n${installed.stderr}`);
    const server = new OwnMariaDb(dataDir, await freeServerPort(), serverOptions);
    await server.start();
    const connection = await server.connect();
    await connection.query('CREATE DATABASE tasks');
    await connection.end();
    return server;
  }

  get url(): string {
    return `mysql://root@127.0.0.1:${this.port}/tasks`;
  }

  private connect() {
    return mysql.createConnection({
      host: '127.0.0.1',
      port: this.port,
      user: 'root',
      connectTimeout: 1000,
    });
  }

  async start(): Promise<void> {
    this.child = spawn(
      mariadbd,
      [
        '--no-defaults',
        `--datadir=${this.dataDir}`,
        `--port=${this.port}`,
        `--socket=${path.join(this.dataDir, 'mysqld.sock')}`,
        '--bind-address=127.0.0.1',
        '--user=root',
        '--skip-grant-tables',
        '--innodb-buffer-pool-size=32M',
        ...this.serverOptions,
      ],
      { stdio: 'ignore' },
    );
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await (await this.connect()).end();
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  /** Kills the server as a crash would: SIGKILL, no shutdown. */
  async crash(): Promise<void> {
    const child = this.child!;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** Stops the server where it is (SIGSTOP): connections stay open, nothing answers, as in a hung host. */
  freeze(): void {
    this.child!.kill('SIGSTOP');
  }

  thaw(): void {
    this.child!.kill('SIGCONT');
  }

  async destroy(): Promise<void> {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null)
      await this.crash();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}
