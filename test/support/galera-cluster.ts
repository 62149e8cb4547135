/**
 * A MariaDB Galera cluster of the test's own: three `mariadbd` nodes on loopback, each with its
 * own data directory, client port and Galera ports (group communication, IST, SST), and an
 * HAProxy of its own in front of them (TCP, every node a writer), all in one temporary folder.
 *
 * As on a real deployment, by deploy/galera/README.md: each node runs on deploy/galera/galera.cnf
 * with only its addresses, ports, paths and memory sizes replaced; the nodes run as the `mysql`
 * user (the state transfer writes the data directory as that user), the first node bootstraps
 * the cluster and the others join it one at a time; the service logs in as its own user with the
 * documented grants, the state transfer (mariabackup) as its own, and HAProxy's health check as a
 * user with none, through an option file outside the repository. A node started again after a
 * crash first recovers its position (`galera_recovery`, what the packaged service does) so it
 * catches up by IST rather than a full copy. A joiner whose state transfer fails exits or is
 * stopped; it is started again, a bounded number of times, and a node that does not come up says
 * what it logged. HAProxy runs the repository's own deploy/haproxy.cfg and deploy/galera-health-check.sh,
 * so it sends connections only to nodes that serve (Synced, or a donor whose transfer does not
 * block it); a node marked down has its sessions cut.
 *
 * Processes are started in sessions of their own (detached), so nothing but `destroy()` stops
 * them; `destroy()` kills each by its process group and removes the folder.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { projectRoot } from '../../src/paths';
import { freeServerPort } from './free-port';

export const mariadbd = process.env.MARIADBD_PATH || '/usr/sbin/mariadbd';
export const galeraProvider =
  process.env.GALERA_PROVIDER_PATH || '/usr/lib/galera/libgalera_smm.so';
export const haproxy = process.env.HAPROXY_PATH || 'haproxy';

const databaseName = 'tasks';
const clusterName = 'tt-test';
/** The node configuration operators copy, which every node here runs on. */
export const nodeConfigTemplate = path.join(projectRoot, 'deploy', 'galera', 'galera.cnf');
/** The service's user (deploy/galera/README.md), with a password of this test run's. */
export const serviceUser = { name: 'tasks', password: crypto.randomBytes(12).toString('hex') };
/** The state transfer's user on each node (`wsrep_sst_auth`), with mariabackup's privileges. */
export const sstUser = { name: 'sst', password: crypto.randomBytes(12).toString('hex') };
/** HAProxy's health check's user, with no privileges at all. */
export const checkUser = { name: 'galera_check', password: crypto.randomBytes(12).toString('hex') };
/** How many times a node is started before its failure to join is the test's. */
const joinAttempts = 3;
/** What a joiner logs when its state transfer failed and it gives up. */
const failedTransfer =
  /State transfer .*failed|Will never receive state|SST script aborted|WSREP_SST: \[ERROR\]|SST failed/;
/**
 * What a joiner logs when its transfer script failed: a failed mariabackup copy leaves it
 * running, outside the cluster, waiting for nothing (the script's own error comes first, the
 * server's report of it long after).
 */
const failedTransferScript =
  /WSREP_SST: \[ERROR\]|Process completed with error: wsrep_sst_|sst_received\(\) failed/;

/** What a node logs once its state transfer is done and it has joined. */
const joined = /-> JOINED|-> SYNCED/;

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

/**
 * deploy/galera/galera.cnf with `settings` in place of the same keys (null drops a key); the
 * settings the file does not have are added at the end.
 */
export function renderNodeConfig(settings: Record<string, string | null>): string {
  const left = new Map(Object.entries(settings));
  const lines: string[] = [];
  for (const line of fs.readFileSync(nodeConfigTemplate, 'utf8').split('\n')) {
    const key = /^([a-z0-9_-]+)\s*=/i.exec(line)?.[1];
    if (key === undefined || !left.has(key)) {
      lines.push(line);
      continue;
    }
    const value = left.get(key);
    left.delete(key);
    if (value !== null) lines.push(`${key}=${value}`);
  }
  for (const [key, value] of left) if (value !== null) lines.push(`${key}=${value}`);
  return lines.join('\n');
}

/** A node that did not come up: its last start's error lines say why. */
export class NodeStartError extends Error {}

export class GaleraNode {
  child?: ChildProcess;
  /** Where this start's part of the error log begins. */
  private logOffset = 0;
  /** Each stop of a joiner whose transfer script failed, and what it logged: a test's failure says so. */
  readonly joinsStopped: string[] = [];

  constructor(
    readonly index: number,
    readonly folder: string,
    readonly ports: Ports,
    /** The cluster's gcomm:// address; none for a server on its own, with wsrep off. */
    readonly clusterAddress: string | undefined,
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

  /** The service's DATABASE_URL for a connection straight to this node, as its own user. */
  get url(): string {
    return `mysql://${serviceUser.name}:${serviceUser.password}@127.0.0.1:${this.ports.client}/${databaseName}`;
  }

  get configFile(): string {
    return path.join(this.folder, 'my.cnf');
  }

  get errorLog(): string {
    return path.join(this.folder, 'error.log');
  }

  writeConfig(): string {
    const provider = [
      `gmcast.listen_addr=tcp://127.0.0.1:${this.ports.gmcast}`,
      `ist.recv_addr=127.0.0.1:${this.ports.ist}`,
      // Enough write sets kept for a node that was down for a minute to catch up by IST.
      'gcache.size=64M',
      'cert.log_conflicts=YES',
    ].join(';');
    const wsrep: Record<string, string | null> =
      this.clusterAddress === undefined
        ? // A server on its own: the same file with every wsrep setting but wsrep_on dropped.
          {
            wsrep_on: 'OFF',
            ...Object.fromEntries(
              fs
                .readFileSync(nodeConfigTemplate, 'utf8')
                .split('\n')
                .map((line) => /^(wsrep_[a-z_]+)\s*=/.exec(line)?.[1])
                .filter((key): key is string => key !== undefined && key !== 'wsrep_on')
                .map((key) => [key, null]),
            ),
          }
        : {
            wsrep_provider: galeraProvider,
            wsrep_provider_options: `"${provider}"`,
            wsrep_cluster_name: clusterName,
            wsrep_cluster_address: this.clusterAddress,
            wsrep_node_name: this.name,
            wsrep_node_address: '127.0.0.1',
            wsrep_sst_receive_address: `127.0.0.1:${this.ports.sst}`,
            wsrep_sst_auth: `${sstUser.name}:${sstUser.password}`,
          };
    fs.writeFileSync(
      this.configFile,
      renderNodeConfig({
        'bind-address': '127.0.0.1',
        port: String(this.ports.client),
        // Three nodes and the tests on one small machine.
        innodb_buffer_pool_size: '48M',
        ...wsrep,
        datadir: this.dataDir,
        socket: path.join(this.folder, 'mysqld.sock'),
        'pid-file': path.join(this.folder, 'mysqld.pid'),
        'log-error': this.errorLog,
        tmpdir: this.tmpDir,
        user: 'mysql',
        innodb_log_file_size: '48M',
      }),
    );
    return this.configFile;
  }

  /** Starts `mariadbd` in a session of its own; `extra` arguments after the config file's. */
  spawn(extra: string[] = []): void {
    this.logOffset = fs.existsSync(this.errorLog) ? fs.statSync(this.errorLog).size : 0;
    const out = fs.openSync(path.join(this.folder, 'stdout.log'), 'a');
    this.child = spawn(mariadbd, [`--defaults-file=${this.configFile}`, ...extra], {
      detached: true,
      stdio: ['ignore', out, out],
    });
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
    return this.syncedIn(await this.syncStatus(), size);
  }

  private syncStatus(): Promise<Record<string, string> | undefined> {
    return this.status([
      'wsrep_local_state',
      'wsrep_cluster_size',
      'wsrep_cluster_status',
      'wsrep_ready',
    ]);
  }

  private syncedIn(status: Record<string, string> | undefined, size?: number): boolean {
    return (
      status !== undefined &&
      status.wsrep_local_state === '4' &&
      status.wsrep_cluster_status === 'Primary' &&
      status.wsrep_ready === 'ON' &&
      (size === undefined || Number(status.wsrep_cluster_size) === size)
    );
  }

  /**
   * Waits until the node is Synced in a cluster of `size`. A joiner whose transfer script failed
   * (`joining`) is stopped then: it would never join.
   */
  async waitSynced(size: number | undefined, timeoutMs: number, joining = false): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const status = await this.syncStatus();
      if (this.syncedIn(status, size)) return;
      // Not once it has logged that it joined: a status query that failed under load says
      // nothing, and a node Joined or Synced may already serve through HAProxy.
      const log = joining && this.running ? this.logOfThisStart() : '';
      if (failedTransferScript.test(log) && !joined.test(log)) {
        this.joinsStopped.push(`${this.name}: ${failedTransferScript.exec(log)![0]}`);
        await this.kill();
        this.stopTransferListener();
      }
      if (this.child && (this.child.exitCode !== null || this.child.signalCode !== null)) {
        throw new NodeStartError(
          `${this.name} exited (${this.child.exitCode ?? this.child.signalCode}); it logged:\n${this.errorsOfThisStart()}`,
        );
      }
      if (Date.now() > deadline)
        throw new NodeStartError(
          `${this.name} is not Synced in a cluster of ${size ?? 'any size'} after ${timeoutMs} ms; it logged:\n${this.errorsOfThisStart()}`,
        );
      await sleep(250);
    }
  }

  /** What the error log says since the last start. */
  logOfThisStart(): string {
    try {
      const log = fs.readFileSync(this.errorLog);
      return log.subarray(Math.min(this.logOffset, log.length)).toString('utf8');
    } catch {
      return '';
    }
  }

  /** The error and warning lines of the last start (the last 20), or its last lines when it has none. */
  errorsOfThisStart(): string {
    const lines = this.logOfThisStart().split('\n');
    const errors = lines.filter((line) => /\[ERROR\]|\[Warning\] WSREP|failed|abort/i.test(line));
    return (errors.length > 0 ? errors : lines).slice(-20).join('\n') || '(nothing)';
  }

  /**
   * Starts the node and waits until it is Synced in a cluster of `size`. A joiner whose state
   * transfer failed (a copy can die under load) exits, or is stopped: it is started again, up to
   * `attempts` times in all. Resolves with the number of starts it took; a node that does not
   * come up rejects with what it logged.
   */
  async start(options: {
    size?: number;
    timeoutMs: number;
    extra?: string[];
    attempts?: number;
  }): Promise<number> {
    const attempts = options.attempts ?? joinAttempts;
    for (let attempt = 1; ; attempt++) {
      this.spawn(options.extra);
      try {
        await this.waitSynced(options.size, options.timeoutMs, true);
        return attempt;
      } catch (error) {
        const transferFailed = !this.running && failedTransfer.test(this.logOfThisStart());
        if (!transferFailed || attempt >= attempts) {
          await this.kill();
          throw new NodeStartError(
            `${(error as Error).message}\n(start ${attempt} of at most ${attempts}${transferFailed ? ', each a failed state transfer' : ''})`,
          );
        }
      }
    }
  }

  tailOfLog(lines = 30): string {
    try {
      return fs.readFileSync(this.errorLog, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '(no error log)';
    }
  }

  /**
   * Stops what still listens for this node's full copy: mariabackup's joiner runs `socat` under
   * `timeout`, in a process group of its own, which outlives the node and would take the port
   * from its next start.
   */
  stopTransferListener(): void {
    const listening = `TCP-LISTEN:${this.ports.sst},`;
    for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
      let command: string;
      try {
        command = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {
        continue; // gone meanwhile
      }
      if (!command.split('\0').some((arg) => arg.startsWith(listening))) continue;
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  }

  /** SIGKILL, as a crash of the host would: no shutdown, nothing flushed beyond what InnoDB already has. */
  async kill(): Promise<void> {
    await killGroup(this.child);
  }

  /** SIGTERM, as `systemctl stop mariadb` does: the node leaves the cluster and shuts down cleanly. */
  async stop(): Promise<void> {
    await killGroup(this.child, 'SIGTERM');
  }

  get running(): boolean {
    return (
      this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null
    );
  }

  /**
   * The last position this node committed, as the packaged service finds it before every start:
   * `galera_recovery` (which runs `mariadbd --wsrep-recover`) prints `--wsrep_start_position=…`.
   * Undefined when it recovered none (a node that was never Synced, or a wiped one).
   */
  recoverPosition(): { uuid: string; seqno: number } | undefined {
    const recovered = spawnSync('galera_recovery', [`--defaults-file=${this.configFile}`], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (recovered.status !== 0)
      throw new Error(
        `galera_recovery failed for ${this.name} (${recovered.status}): ${recovered.stdout}${recovered.stderr}`,
      );
    const match = /--wsrep_start_position=([0-9a-f-]+):(-?\d+)/.exec(recovered.stdout);
    return match ? { uuid: match[1], seqno: Number(match[2]) } : undefined;
  }

  /** grastate.dat's fields: what a node knows of its state without recovering it. */
  grastate(): Record<string, string> {
    const text = fs.readFileSync(path.join(this.dataDir, 'grastate.dat'), 'utf8');
    return Object.fromEntries(
      [...text.matchAll(/^(\w+):\s*(.*)$/gm)].map((match) => [match[1], match[2].trim()]),
    );
  }

  /** Marks this node's state as the one to bootstrap from (grastate.dat's `safe_to_bootstrap: 1`). */
  markSafeToBootstrap(): void {
    const file = path.join(this.dataDir, 'grastate.dat');
    fs.writeFileSync(
      file,
      fs.readFileSync(file, 'utf8').replace(/^safe_to_bootstrap:.*$/m, 'safe_to_bootstrap: 1'),
    );
  }

  /**
   * After a crash: recovers the last committed position and starts from it, as the packaged
   * service does, so the node asks a donor for the write sets it missed (IST) instead of a whole
   * copy (SST); waits until it is Synced in a cluster of `size`.
   */
  async restart(
    timeoutMs: number,
    size = 3,
  ): Promise<{ position: string | undefined; attempts: number }> {
    const recovered = this.recoverPosition();
    const position = recovered && `${recovered.uuid}:${recovered.seqno}`;
    const attempts = await this.start({
      size,
      timeoutMs,
      extra: recovered && recovered.seqno >= 0 ? [`--wsrep_start_position=${position}`] : undefined,
    });
    return { position, attempts };
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

/**
 * The service's database and users, as deploy/galera/README.md gives them: the service's user
 * with every privilege on its database and nothing else, the health check's with none.
 */
async function createServiceDatabase(node: GaleraNode): Promise<void> {
  const admin = await node.connect();
  try {
    await admin.query(`CREATE DATABASE ${databaseName} CHARACTER SET utf8mb4`);
    await admin.query(`CREATE USER ?@'%' IDENTIFIED BY ?`, [
      serviceUser.name,
      serviceUser.password,
    ]);
    await admin.query(`GRANT ALL ON ${databaseName}.* TO ?@'%'`, [serviceUser.name]);
    await admin.query(`CREATE USER ?@'127.0.0.1' IDENTIFIED BY ?`, [
      checkUser.name,
      checkUser.password,
    ]);
    if (node.clusterAddress !== undefined) {
      await admin.query(`CREATE USER ?@'localhost' IDENTIFIED BY ?`, [
        sstUser.name,
        sstUser.password,
      ]);
      await admin.query(
        `GRANT RELOAD, PROCESS, LOCK TABLES, BINLOG MONITOR ON *.* TO ?@'localhost'`,
        [sstUser.name],
      );
    }
  } finally {
    await admin.end();
  }
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
      { client: await freeServerPort(), gmcast: 0, ist: 0, sst: 0 },
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
      await createServiceDatabase(node);
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
    return `mysql://${serviceUser.name}:${serviceUser.password}@127.0.0.1:${this.proxyPort}/${databaseName}`;
  }

  /** HAProxy's admin socket (deploy/haproxy.cfg's `stats socket`). */
  get statsSocket(): string {
    return path.join(this.folder, 'haproxy.sock');
  }

  /**
   * The health check as HAProxy runs it: the repository's script, linked from outside the
   * repository with its option file (the check user's password) beside it, as README.md installs it.
   */
  get healthCheck(): string {
    return path.join(this.folder, 'galera-health-check.sh');
  }

  get haproxyLog(): string {
    return path.join(this.folder, 'haproxy.log');
  }

  /** One command on HAProxy's admin socket (what `socat stdio /run/haproxy/galera.sock` sends); its answer. */
  haproxyCommand(command: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.createConnection(this.statsSocket);
      let answer = '';
      socket.setEncoding('utf8');
      socket.on('connect', () => socket.end(`${command}\n`));
      socket.on('data', (chunk) => (answer += chunk));
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
    });
  }

  /** HAProxy's lines saying a node went down, and why (its health check's words), since `from` bytes: the first ten. */
  haproxyDowns(from = 0): string[] {
    return fs
      .readFileSync(this.haproxyLog)
      .subarray(from)
      .toString('utf8')
      .split('\n')
      .filter((line) => / is DOWN|not serving|galera-health-check/.test(line))
      .slice(0, 10);
  }

  /** The nodes' error log lengths now, for nodesSuspecting(). */
  errorLogSizes(): number[] {
    return this.nodes.map((node) => fs.statSync(node.errorLog).size);
  }

  /** What the nodes logged since `sizes` of suspecting one another or leaving the primary component: the first ten lines. */
  nodesSuspecting(sizes: number[]): string[] {
    return this.nodes
      .flatMap((node, i) =>
        fs
          .readFileSync(node.errorLog)
          .subarray(sizes[i])
          .toString('utf8')
          .split('\n')
          .filter((line) => /suspect|primary = no|non-primary|inactive/i.test(line))
          .map((line) => `${node.name}: ${line.slice(0, 160)}`),
      )
      .slice(0, 10);
  }

  /** HAProxy's view of each node: `UP`, `DOWN`, `MAINT`, `DRAIN`…, and its current sessions. */
  async haproxyServers(): Promise<Record<string, { status: string; sessions: number }>> {
    const csv = await this.haproxyCommand('show stat');
    const [header, ...rows] = csv.replace(/^# /, '').trim().split('\n');
    const columns = header.split(',');
    const servers: Record<string, { status: string; sessions: number }> = {};
    for (const row of rows) {
      const fields = Object.fromEntries(row.split(',').map((value, i) => [columns[i], value]));
      if (fields.pxname === 'nodes' && !['FRONTEND', 'BACKEND'].includes(fields.svname))
        servers[fields.svname] = { status: fields.status, sessions: Number(fields.scur) };
    }
    return servers;
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
        client: await freeServerPort(),
        gmcast: await freeServerPort(),
        ist: await freeServerPort(),
        sst: await freeServerPort(),
      });
    const clusterAddress = `gcomm://${ports.map((p) => `127.0.0.1:${p.gmcast}`).join(',')}`;
    const nodes = ports.map(
      (p, i) => new GaleraNode(i, path.join(folder, `node${i + 1}`), p, clusterAddress),
    );
    const cluster = new GaleraCluster(folder, nodes, await freeServerPort());
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
      await nodes[0].start({ extra: ['--wsrep-new-cluster'], size: 1, timeoutMs: 90_000 });
      log(`${nodes[0].name} bootstrapped at ${Date.now() - started} ms`);
      // Before the others join: they receive the users with the rest in their state transfer.
      await createServiceDatabase(nodes[0]);
      for (const [i, node] of nodes.slice(1).entries()) {
        const attempts = await node.start({ size: i + 2, timeoutMs: 120_000 });
        log(`${node.name} joined at ${Date.now() - started} ms (start ${attempts})`);
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
    fs.symlinkSync(path.join(projectRoot, 'deploy', 'galera-health-check.sh'), this.healthCheck);
    fs.writeFileSync(
      path.join(this.folder, 'galera-health-check.cnf'),
      `[client]\nuser=${checkUser.name}\npassword=${checkUser.password}\n`,
      { mode: 0o600 },
    );
    const env = {
      ...process.env,
      GALERA_LISTEN: `127.0.0.1:${this.proxyPort}`,
      GALERA_CHECK: this.healthCheck,
      GALERA_STATS_SOCKET: this.statsSocket,
      ...Object.fromEntries(
        this.nodes.map((node, i) => [`GALERA_NODE${i + 1}`, `127.0.0.1:${node.ports.client}`]),
      ),
    };
    const out = fs.openSync(this.haproxyLog, 'a');
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
          user: serviceUser.name,
          password: serviceUser.password,
          connectTimeout: 1000,
        });
        await connection.end();
        return;
      } catch (error) {
        if (this.haproxyChild.exitCode !== null)
          throw new Error(
            `haproxy exited with ${this.haproxyChild.exitCode}: ${fs.readFileSync(this.haproxyLog, 'utf8')}`,
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
      await admin.query(`GRANT ALL ON \`${name}\`.* TO ?@'%'`, [serviceUser.name]);
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
      node.stopTransferListener();
    }
    // GALERA_KEEP_LOGS=DIR keeps HAProxy's and the nodes' logs there, to read after a failure.
    const keep = process.env.GALERA_KEEP_LOGS;
    if (keep) {
      const into = fs.mkdtempSync(path.join(keep, 'cluster-'));
      fs.copyFileSync(this.haproxyLog, path.join(into, 'haproxy.log'));
      for (const node of this.nodes)
        fs.copyFileSync(node.errorLog, path.join(into, `${node.name}.err`));
    }
    fs.rmSync(this.folder, { recursive: true, force: true });
  }
}
