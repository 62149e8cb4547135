/**
 * A MariaDB Galera cluster of the test's own: three `mariadbd` nodes on loopback, each with its
 * own data directory, client port and Galera ports (group communication, IST, SST), and an
 * HAProxy of its own in front of them (TCP, every node a writer), all in one temporary folder.
 *
 * As on a real deployment: the nodes run as the `mysql` user (rsync's state transfer cannot
 * write a root-owned data directory), the first node bootstraps the cluster and the others join
 * it one at a time; a node started again after a crash first recovers its position from InnoDB
 * (`--wsrep-recover`, what the packaged service does) so it catches up by IST rather than a
 * full copy. HAProxy runs the repository's own deploy/haproxy.cfg and deploy/galera-health-check.sh,
 * as an operator would, so it sends connections only to nodes that serve (Synced, or a donor whose
 * transfer does not block it) and a joining, isolated or blocked node gets no traffic; a node
 * marked down has its sessions cut.
 *
 * Processes are started in sessions of their own (detached), so nothing but `destroy()` stops
 * them; `destroy()` kills each by its process group and removes the folder.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { projectRoot } from '../../src/paths';
import { freePort } from './free-port';

export const mariadbd = process.env.MARIADBD_PATH || '/usr/sbin/mariadbd';
export const galeraProvider =
  process.env.GALERA_PROVIDER_PATH || '/usr/lib/galera/libgalera_smm.so';
export const haproxy = process.env.HAPROXY_PATH || 'haproxy';

const databaseName = 'tasks';
const clusterName = 'tt-test';

interface Ports {
  client: number;
  gmcast: number;
  ist: number;
  sst: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function mysqlIds(): { uid: number; gid: number } {
  const uid = spawnSync('id', ['-u', 'mysql'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'mysql'], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0)
    throw new Error('the mysql user is missing (apt-get install mariadb-server)');
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

function chownTree(target: string, ids: { uid: number; gid: number }): void {
  fs.chownSync(target, ids.uid, ids.gid);
  if (!fs.statSync(target).isDirectory()) return;
  for (const entry of fs.readdirSync(target)) chownTree(path.join(target, entry), ids);
}

/** Kills a detached process and everything it started (its process group); resolves once it is gone. */
async function killGroup(
  child: ChildProcess | undefined,
  signal: NodeJS.Signals = 'SIGKILL',
): Promise<void> {
  if (!child || child.pid === undefined || child.exitCode !== null || child.signalCode !== null)
    return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
  await exited;
}

export class GaleraNode {
  child?: ChildProcess;

  constructor(
    readonly index: number,
    readonly folder: string,
    readonly ports: Ports,
    /** The cluster's gcomm:// address; none for a server on its own, with wsrep off. */
    private readonly clusterAddress: string | undefined,
  ) {}

  get dataDir(): string {
    return path.join(this.folder, 'data');
  }

  /** Temporary tables and files of this node only. */
  get tmpDir(): string {
    return path.join(this.folder, 'tmp');
  }

  get name(): string {
    return `node${this.index + 1}`;
  }

  /** The service's DATABASE_URL for a connection straight to this node. */
  get url(): string {
    return `mysql://root@127.0.0.1:${this.ports.client}/${databaseName}`;
  }

  get errorLog(): string {
    return path.join(this.folder, 'error.log');
  }

  writeConfig(): string {
    const file = path.join(this.folder, 'my.cnf');
    const provider = [
      `gmcast.listen_addr=tcp://127.0.0.1:${this.ports.gmcast}`,
      `ist.recv_addr=127.0.0.1:${this.ports.ist}`,
      // Enough write sets kept for a node that was down for a minute to catch up by IST.
      'gcache.size=64M',
      'cert.log_conflicts=YES',
    ].join(';');
    fs.writeFileSync(
      file,
      [
        '[mysqld]',
        `datadir=${this.dataDir}`,
        `socket=${path.join(this.folder, 'mysqld.sock')}`,
        `pid-file=${path.join(this.folder, 'mysqld.pid')}`,
        `log-error=${this.errorLog}`,
        `tmpdir=${this.tmpDir}`,
        `port=${this.ports.client}`,
        'bind-address=127.0.0.1',
        'user=mysql',
        'skip-grant-tables',
        'skip-name-resolve',
        'innodb_buffer_pool_size=48M',
        'innodb_log_file_size=48M',
        'max_connections=300',
        'binlog_format=ROW',
        'default_storage_engine=InnoDB',
        'innodb_autoinc_lock_mode=2',
        ...(this.clusterAddress === undefined
          ? ['wsrep_on=OFF']
          : [
              'wsrep_on=ON',
              `wsrep_provider=${galeraProvider}`,
              `wsrep_provider_options="${provider}"`,
              `wsrep_cluster_name=${clusterName}`,
              `wsrep_cluster_address=${this.clusterAddress}`,
              `wsrep_node_name=${this.name}`,
              'wsrep_node_address=127.0.0.1',
              `wsrep_sst_receive_address=127.0.0.1:${this.ports.sst}`,
              'wsrep_sst_method=rsync',
              'wsrep_slave_threads=2',
              // Each certification conflict in the error log, with the keys and statements involved.
              'wsrep_log_conflicts=ON',
            ]),
        '',
      ].join('\n'),
    );
    return file;
  }

  /** Starts `mariadbd` in a session of its own; `extra` arguments after the config file's. */
  spawn(extra: string[] = []): void {
    const out = fs.openSync(path.join(this.folder, 'stdout.log'), 'a');
    this.child = spawn(
      mariadbd,
      [`--defaults-file=${path.join(this.folder, 'my.cnf')}`, ...extra],
      { detached: true, stdio: ['ignore', out, out] },
    );
    fs.closeSync(out);
  }

  async connect(): Promise<mysql.Connection> {
    return mysql.createConnection({
      host: '127.0.0.1',
      port: this.ports.client,
      user: 'root',
      connectTimeout: 2000,
    });
  }

  /** `SHOW STATUS` values of this node, or undefined when it does not answer. */
  async status(names: string[]): Promise<Record<string, string> | undefined> {
    let connection: mysql.Connection | undefined;
    try {
      connection = await this.connect();
      const [rows] = await connection.query(
        `SHOW STATUS WHERE Variable_name IN (${names.map(() => '?').join(', ')})`,
        names,
      );
      return Object.fromEntries(
        (rows as Array<{ Variable_name: string; Value: string }>).map((row) => [
          row.Variable_name,
          row.Value,
        ]),
      );
    } catch {
      return undefined;
    } finally {
      await connection?.end().catch(() => {});
    }
  }

  /** Synced (wsrep_local_state 4) in a primary component of `size` nodes, ready for queries. */
  async isSynced(size?: number): Promise<boolean> {
    const status = await this.status([
      'wsrep_local_state',
      'wsrep_cluster_size',
      'wsrep_cluster_status',
      'wsrep_ready',
    ]);
    return (
      status !== undefined &&
      status.wsrep_local_state === '4' &&
      status.wsrep_cluster_status === 'Primary' &&
      status.wsrep_ready === 'ON' &&
      (size === undefined || Number(status.wsrep_cluster_size) === size)
    );
  }

  async waitSynced(size: number | undefined, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await this.isSynced(size))) {
      if (this.child && (this.child.exitCode !== null || this.child.signalCode !== null)) {
        throw new Error(
          `${this.name} exited (${this.child.exitCode ?? this.child.signalCode}):\n${this.tailOfLog()}`,
        );
      }
      if (Date.now() > deadline)
        throw new Error(
          `${this.name} is not Synced in a cluster of ${size ?? 'any size'} after ${timeoutMs} ms:\n${this.tailOfLog()}`,
        );
      await sleep(250);
    }
  }

  tailOfLog(lines = 30): string {
    try {
      return fs.readFileSync(this.errorLog, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '(no error log)';
    }
  }

  /** SIGKILL, as a crash of the host would: no shutdown, nothing flushed beyond what InnoDB already has. */
  async kill(): Promise<void> {
    await killGroup(this.child);
  }

  get running(): boolean {
    return (
      this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null
    );
  }

  /**
   * After a crash: recovers the last committed position from InnoDB (`--wsrep-recover`, as the
   * packaged service does before every start) and starts from it, so the node asks a donor for
   * the write sets it missed (IST) instead of a whole copy (SST).
   */
  async restart(timeoutMs: number): Promise<{ position: string | undefined }> {
    const recoverLog = path.join(this.folder, 'recover.log');
    fs.rmSync(recoverLog, { force: true });
    const recovered = spawnSync(
      mariadbd,
      [
        `--defaults-file=${path.join(this.folder, 'my.cnf')}`,
        '--wsrep-recover',
        `--log-error=${recoverLog}`,
      ],
      { encoding: 'utf8', timeout: 120_000 },
    );
    const log = fs.existsSync(recoverLog) ? fs.readFileSync(recoverLog, 'utf8') : recovered.stderr;
    const position = /WSREP: Recovered position: (\S+:-?\d+)/.exec(log)?.[1];
    this.spawn(position && !position.endsWith(':-1') ? [`--wsrep-start-position=${position}`] : []);
    await this.waitSynced(3, timeoutMs);
    return { position };
  }
}

/** `mariadb-install-db` for the node, into its own data directory, as the mysql user. */
function installDataDir(node: GaleraNode): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(
      'mariadb-install-db',
      [
        '--no-defaults',
        '--user=mysql',
        `--datadir=${node.dataDir}`,
        `--tmpdir=${node.tmpDir}`,
        '--skip-test-db',
        '--auth-root-authentication-method=normal',
        '--innodb-log-file-size=48M',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    child.once('exit', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`mariadb-install-db failed for ${node.name}:\n${stderr}`)),
    );
  });
}

async function waitConnectable(node: GaleraNode, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await (await node.connect()).end();
      return;
    } catch (error) {
      if (!node.running)
        throw new Error(`${node.name} exited:\n${node.tailOfLog()}`, { cause: error });
      if (Date.now() > deadline) throw error;
      await sleep(200);
    }
  }
}

/**
 * One MariaDB server configured exactly as a node of the cluster but with wsrep off: what the
 * benchmark compares the cluster with, so the difference is Galera's alone.
 */
export class StandaloneMariaDb {
  private constructor(
    readonly folder: string,
    readonly node: GaleraNode,
  ) {}

  get url(): string {
    return this.node.url;
  }

  static async start(): Promise<StandaloneMariaDb> {
    const ids = mysqlIds();
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-standalone-'));
    const node = new GaleraNode(
      0,
      path.join(folder, 'server'),
      { client: await freePort(), gmcast: 0, ist: 0, sst: 0 },
      undefined,
    );
    const server = new StandaloneMariaDb(folder, node);
    try {
      fs.mkdirSync(node.tmpDir, { recursive: true });
      node.writeConfig();
      chownTree(folder, ids);
      await installDataDir(node);
      chownTree(folder, ids);
      node.spawn();
      await waitConnectable(node, 60_000);
      const admin = await node.connect();
      try {
        await admin.query(`CREATE DATABASE ${databaseName}`);
      } finally {
        await admin.end();
      }
      return server;
    } catch (error) {
      await server.destroy();
      throw error;
    }
  }

  async destroy(): Promise<void> {
    await this.node.kill().catch(() => {});
    fs.rmSync(this.folder, { recursive: true, force: true });
  }
}

export class GaleraCluster {
  private haproxyChild?: ChildProcess;

  private constructor(
    readonly folder: string,
    readonly nodes: GaleraNode[],
    readonly proxyPort: number,
  ) {}

  /** The service's DATABASE_URL through HAProxy. */
  get proxyUrl(): string {
    return `mysql://root@127.0.0.1:${this.proxyPort}/${databaseName}`;
  }

  /**
   * Makes three data directories, bootstraps the first node, joins the other two in turn, creates
   * the service's database and starts HAProxy. Cleans up after itself if any step fails.
   */
  static async start(options: { log?: (message: string) => void } = {}): Promise<GaleraCluster> {
    const log = options.log ?? (() => {});
    const ids = mysqlIds();
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-galera-'));
    const ports: Ports[] = [];
    for (let i = 0; i < 3; i++)
      ports.push({
        client: await freePort(),
        gmcast: await freePort(),
        ist: await freePort(),
        sst: await freePort(),
      });
    const clusterAddress = `gcomm://${ports.map((p) => `127.0.0.1:${p.gmcast}`).join(',')}`;
    const nodes = ports.map(
      (p, i) => new GaleraNode(i, path.join(folder, `node${i + 1}`), p, clusterAddress),
    );
    const cluster = new GaleraCluster(folder, nodes, await freePort());
    try {
      const started = Date.now();
      for (const node of nodes) {
        fs.mkdirSync(node.tmpDir, { recursive: true });
        node.writeConfig();
      }
      chownTree(folder, ids);
      // The three data directories at once: each bootstrap is mostly waiting on the disk.
      await Promise.all(nodes.map(installDataDir));
      chownTree(folder, ids);
      log(`data directories made in ${Date.now() - started} ms`);
      nodes[0].spawn(['--wsrep-new-cluster']);
      await nodes[0].waitSynced(1, 90_000);
      log(`${nodes[0].name} bootstrapped at ${Date.now() - started} ms`);
      for (const [i, node] of nodes.slice(1).entries()) {
        node.spawn();
        await node.waitSynced(i + 2, 120_000);
        log(`${node.name} joined at ${Date.now() - started} ms`);
      }
      const admin = await nodes[0].connect();
      try {
        await admin.query(`CREATE DATABASE ${databaseName}`);
      } finally {
        await admin.end();
      }
      await cluster.startHaproxy();
      log(`cluster and HAProxy up at ${Date.now() - started} ms`);
      return cluster;
    } catch (error) {
      await cluster.destroy();
      throw error;
    }
  }

  /** HAProxy on the repository's deploy/haproxy.cfg, with this cluster's addresses in its environment. */
  private async startHaproxy(): Promise<void> {
    const config = path.join(projectRoot, 'deploy', 'haproxy.cfg');
    const env = {
      ...process.env,
      GALERA_LISTEN: `127.0.0.1:${this.proxyPort}`,
      GALERA_CHECK: path.join(projectRoot, 'deploy', 'galera-health-check.sh'),
      ...Object.fromEntries(
        this.nodes.map((node, i) => [`GALERA_NODE${i + 1}`, `127.0.0.1:${node.ports.client}`]),
      ),
    };
    const out = fs.openSync(path.join(this.folder, 'haproxy.log'), 'a');
    this.haproxyChild = spawn(haproxy, ['-db', '-f', config], {
      detached: true,
      stdio: ['ignore', out, out],
      env,
    });
    fs.closeSync(out);
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        const connection = await mysql.createConnection({
          host: '127.0.0.1',
          port: this.proxyPort,
          user: 'root',
          connectTimeout: 1000,
        });
        await connection.end();
        return;
      } catch (error) {
        if (this.haproxyChild.exitCode !== null)
          throw new Error(
            `haproxy exited with ${this.haproxyChild.exitCode}: ${fs.readFileSync(path.join(this.folder, 'haproxy.log'), 'utf8')}`,
            { cause: error },
          );
        if (Date.now() > deadline) throw error;
        await sleep(200);
      }
    }
  }

  /** A new, empty database on the cluster; the URL of it on each node. */
  async createDatabase(name: string): Promise<string[]> {
    const admin = await this.nodes[0].connect();
    try {
      await admin.query(`CREATE DATABASE \`${name}\``);
    } finally {
      await admin.end();
    }
    return this.nodes.map((node) => node.url.replace(new RegExp(`/${databaseName}$`), `/${name}`));
  }

  /** Runs `sql` on one node, straight (not through HAProxy), with causal reads. */
  async query<Row>(node: GaleraNode, sql: string, values: unknown[] = []): Promise<Row[]> {
    const connection = await node.connect();
    try {
      await connection.query('SET SESSION wsrep_sync_wait = 1');
      await connection.query(`USE ${databaseName}`);
      const [rows] = await connection.query(sql, values);
      return rows as Row[];
    } finally {
      await connection.end();
    }
  }

  /** Stops everything this cluster started (by process group) and removes its folder; never throws. */
  async destroy(): Promise<void> {
    try {
      await killGroup(this.haproxyChild);
    } catch {
      // keep going: the nodes must go too
    }
    for (const node of this.nodes) {
      await node.kill().catch(() => {});
    }
    fs.rmSync(this.folder, { recursive: true, force: true });
  }
}
