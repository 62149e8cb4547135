/**
 * `make bench`, cluster part: create, get and list throughput of two service instances on a
 * three-node MariaDB Galera cluster (each instance on a node of its own, so writes go to two
 * nodes), against one instance on one MariaDB server configured as a node but with wsrep off,
 * and against one instance alone on the cluster (Galera's cost apart from a second instance's
 * gain), in the same run, alternating rounds; then where the difference goes, statement by
 * statement.
 * Everything (three or one mariadbd, the instances, the load) shares this machine's cores.
 *
 * BENCH_CONNECTIONS (16, split evenly over the cluster's two instances), BENCH_SECONDS (5),
 * BENCH_ROUNDS (2), BENCH_WARMUP_SECONDS (3), BENCH_OPERATIONS (createTask,getTask,listProjectTasks).
 */
import fs from 'node:fs';
import os from 'node:os';
import mysql from 'mysql2/promise';
import { spawnSync } from 'node:child_process';
import {
  galeraProvider,
  GaleraCluster,
  haproxy,
  mariadbd,
  StandaloneMariaDb,
  type GaleraNode,
} from '../support/galera-cluster';
import { operations, seedFixture, withKnex, type Fixture } from './fixture';
import { drive, type LoadResult, type Operation } from './load';
import {
  cpuSecondsOf,
  serviceArguments,
  startServerProcess,
  type ServerProcess,
} from './processes';
import { fmt } from './report';

const settings = {
  connections: Number(process.env.BENCH_CONNECTIONS ?? 16),
  seconds: Number(process.env.BENCH_SECONDS ?? 5),
  rounds: Number(process.env.BENCH_ROUNDS ?? 2),
  warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 3),
};
const serviceEnv = { RATE_LIMIT_PER_MINUTE: '999999999', LOG_LEVEL: 'info' };
const measured = (process.env.BENCH_OPERATIONS ?? 'createTask,getTask,listProjectTasks').split(',');

/** One side of the comparison: its instances (driven at once, the connections split), its servers' processes. */
interface Target {
  name: string;
  instances: ServerProcess[];
  databasePids: number[];
  fixture: Fixture;
}

interface Figures {
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  serviceCpuUs: number;
  databaseCpuUs: number;
}

async function driveTarget(
  target: Target,
  operation: Operation,
  seconds: number,
): Promise<{ result: LoadResult; serviceCpu: number; databaseCpu: number }> {
  const serviceBefore = target.instances.map((i) => i.cpuSeconds());
  const databaseBefore = target.databasePids.map(cpuSecondsOf);
  const share = Math.max(1, Math.round(settings.connections / target.instances.length));
  const results = await Promise.all(
    target.instances.map((instance) =>
      drive(instance.url, target.fixture.key, operation, { connections: share, seconds }),
    ),
  );
  const serviceCpu = target.instances.reduce(
    (sum, instance, i) => sum + instance.cpuSeconds() - serviceBefore[i],
    0,
  );
  const databaseCpu = target.databasePids.reduce(
    (sum, pid, i) => sum + cpuSecondsOf(pid) - databaseBefore[i],
    0,
  );
  const requests = results.reduce((sum, r) => sum + r.requests, 0);
  return {
    result: {
      requests,
      requestsPerSecond: results.reduce((sum, r) => sum + r.requestsPerSecond, 0),
      p50Ms: results.reduce((sum, r) => sum + r.p50Ms * r.requests, 0) / requests,
      p99Ms: Math.max(...results.map((r) => r.p99Ms)),
    },
    serviceCpu,
    databaseCpu,
  };
}

/** Warms every target, then measures them in turn, round after round. */
async function measure(targets: Target[], name: string): Promise<Figures[]> {
  const pick = (target: Target) => operations(target.fixture).find((op) => op.name === name)!;
  for (const target of targets) await driveTarget(target, pick(target), settings.warmupSeconds);
  const totals = targets.map(() => ({
    requests: 0,
    seconds: 0,
    p50: 0,
    p99: 0,
    serviceCpu: 0,
    databaseCpu: 0,
  }));
  for (let round = 0; round < settings.rounds; round++) {
    for (const [i, target] of targets.entries()) {
      const { result, serviceCpu, databaseCpu } = await driveTarget(
        target,
        pick(target),
        settings.seconds,
      );
      const total = totals[i];
      total.requests += result.requests;
      total.seconds += result.requests / result.requestsPerSecond;
      total.p50 += result.p50Ms / settings.rounds;
      total.p99 += result.p99Ms / settings.rounds;
      total.serviceCpu += serviceCpu;
      total.databaseCpu += databaseCpu;
    }
  }
  return totals.map((t) => ({
    requests: t.requests,
    requestsPerSecond: t.requests / t.seconds,
    p50Ms: t.p50,
    p99Ms: t.p99,
    serviceCpuUs: (t.serviceCpu * 1e6) / t.requests,
    databaseCpuUs: (t.databaseCpu * 1e6) / t.requests,
  }));
}

/** Microseconds per run of `statement` on one connection, one after the other. */
async function perStatementUs(statement: () => Promise<unknown>, count: number): Promise<number> {
  for (let i = 0; i < 20; i++) await statement();
  const started = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await statement();
  return Number(process.hrtime.bigint() - started) / 1000 / count;
}

async function connectTo(url: string, syncWait?: number): Promise<mysql.Connection> {
  const parsed = new URL(url);
  const connection = await mysql.createConnection({
    host: parsed.hostname,
    port: Number(parsed.port),
    user: 'root',
    database: parsed.pathname.slice(1),
  });
  if (syncWait !== undefined) await connection.query(`SET SESSION wsrep_sync_wait = ${syncWait}`);
  return connection;
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * One connection per case, one statement at a time, nothing else running: a read of one task by
 * its key (with and without causal reads) and a one-row insert committed (replicated and
 * certified on the cluster, flushed to disk on both). The cases take turns, round after round;
 * each figure is the median of its rounds.
 */
async function statementCosts(
  single: StandaloneMariaDb,
  node: GaleraNode,
  taskId: string,
): Promise<Record<string, number>> {
  const cases: Array<{
    name: string;
    url: string;
    syncWait?: number;
    statement: 'read' | 'commit';
    count: number;
  }> = [
    { name: 'read, one server', url: single.url, statement: 'read', count: 1000 },
    {
      name: 'read, Galera node, wsrep_sync_wait = 0',
      url: node.url,
      syncWait: 0,
      statement: 'read',
      count: 1000,
    },
    {
      name: 'read, Galera node, wsrep_sync_wait = 1',
      url: node.url,
      syncWait: 1,
      statement: 'read',
      count: 1000,
    },
    { name: 'insert and commit, one server', url: single.url, statement: 'commit', count: 300 },
    { name: 'insert and commit, Galera node', url: node.url, statement: 'commit', count: 300 },
  ];
  const connections = await Promise.all(cases.map((c) => connectTo(c.url, c.syncWait)));
  const rounds: number[][] = cases.map(() => []);
  try {
    for (const [i, c] of cases.entries())
      if (c.statement === 'commit')
        await connections[i].query(
          'create table if not exists bench_commits (id int auto_increment primary key, at datetime(3) not null)',
        );
    for (let round = 0; round < 5; round++) {
      for (const [i, c] of cases.entries()) {
        const connection = connections[i];
        const run =
          c.statement === 'read'
            ? () => connection.query('select * from tasks where task_id = ?', [taskId])
            : () => connection.query('insert into bench_commits (at) values (now(3))');
        rounds[i].push(await perStatementUs(run, c.count));
      }
    }
    for (const [i, c] of cases.entries())
      if (c.statement === 'commit')
        await connections[i].query('drop table if exists bench_commits');
  } finally {
    for (const connection of connections) await connection.end().catch(() => {});
  }
  return Object.fromEntries(cases.map((c, i) => [c.name, median(rounds[i])]));
}

async function conflictsOn(nodes: GaleraNode[]): Promise<number> {
  let total = 0;
  for (const node of nodes) {
    const status = await node.status(['wsrep_local_cert_failures', 'wsrep_local_bf_aborts']);
    total +=
      Number(status?.wsrep_local_cert_failures ?? 0) + Number(status?.wsrep_local_bf_aborts ?? 0);
  }
  return total;
}

/** What the cluster needs that this machine lacks, if anything (as test/run-tests.sh checks). */
function missing(): string[] {
  const lacks: string[] = [];
  if (process.getuid?.() !== 0) lacks.push('root (the nodes run as the mysql user)');
  if (!fs.existsSync(mariadbd)) lacks.push(mariadbd);
  if (!fs.existsSync(galeraProvider)) lacks.push(`galera-4 (${galeraProvider})`);
  for (const tool of ['mariabackup', 'socat', haproxy, 'mariadb-install-db'])
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) lacks.push(tool);
  return lacks;
}

async function main(): Promise<void> {
  const lacks = missing();
  if (lacks.length > 0) {
    console.log(
      `\n*** The Galera part of the benchmark did NOT run: it needs ${lacks.join(', ')} (apt-get install galera-4 mariadb-backup socat haproxy mariadb-server).`,
    );
    return;
  }
  const cpus = os.cpus();
  console.log(
    `\n## MariaDB Galera: two instances on a three-node cluster against one instance on one server\n`,
  );
  console.log(
    `${cpus.length} × ${cpus[0].model}; everything on this machine: three mariadbd nodes (or one), the instances and the load. ` +
      `autocannon ${settings.connections} connections (the cluster's split over its two instances, each on its own node), ` +
      `${settings.warmupSeconds} s warm-up, ${settings.rounds} rounds of ${settings.seconds} s per target, alternating. ` +
      `One server: a mariadbd configured as a node, wsrep off. Galera, 1 instance: the first of the two alone, on node 1.\n`,
  );
  let single: StandaloneMariaDb | undefined;
  let cluster: GaleraCluster | undefined;
  const instances: ServerProcess[] = [];
  try {
    single = await StandaloneMariaDb.start();
    cluster = await GaleraCluster.start();
    const singleFixture = await withKnex({ client: 'mysql', url: single.url }, (knex) =>
      seedFixture(knex, 1000),
    );
    const clusterFixture = await withKnex({ client: 'mysql', url: cluster.nodes[0].url }, (knex) =>
      seedFixture(knex, 1000),
    );
    const start = async (url: string) => {
      const instance = await startServerProcess(serviceArguments(), {
        ...serviceEnv,
        DATABASE_URL: url,
      });
      instances.push(instance);
      return instance;
    };
    const one: Target = {
      name: 'one server',
      instances: [await start(single.url)],
      databasePids: [single.node.child!.pid!],
      fixture: singleFixture,
    };
    const galera: Target = {
      name: 'Galera, 2 instances',
      instances: [await start(cluster.nodes[0].url), await start(cluster.nodes[1].url)],
      databasePids: cluster.nodes.map((node) => node.child!.pid!),
      fixture: clusterFixture,
    };
    // The first of the two alone: what Galera costs one instance, apart from what a second adds.
    const galeraOne: Target = {
      ...galera,
      name: 'Galera, 1 instance',
      instances: [galera.instances[0]],
    };
    const targets = [one, galeraOne, galera];

    const each = (figures: Figures[], show: (f: Figures) => string) =>
      figures.map(show).join(' / ');
    console.log(
      '| operation | req/s: one server, 1 instance / Galera, 1 instance / Galera, 2 instances | Galera 2 instances ÷ one server | p50 ms, same order | p99 ms | ' +
        'service CPU µs per request | database CPU µs per request (Galera: 3 nodes) |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    let conflicts = 0;
    for (const name of measured) {
      const before = name === 'createTask' ? await conflictsOn(cluster.nodes) : 0;
      const figures = await measure(targets, name);
      if (name === 'createTask') conflicts = (await conflictsOn(cluster.nodes)) - before;
      const [o, , g] = figures;
      console.log(
        `| ${name} | ${each(figures, (f) => fmt(f.requestsPerSecond))} | ${fmt(g.requestsPerSecond / o.requestsPerSecond, 2)} | ` +
          `${each(figures, (f) => fmt(f.p50Ms, 1))} | ${each(figures, (f) => fmt(f.p99Ms))} | ${each(figures, (f) => fmt(f.serviceCpuUs))} | ${each(figures, (f) => fmt(f.databaseCpuUs))} |`,
      );
    }
    console.log(
      `\nCertification conflicts and brute-force aborts on the cluster during createTask (warm-up included): ${conflicts}.`,
    );

    const costs = await statementCosts(single, cluster.nodes[1], clusterFixture.taskIds[0]);
    console.log(
      '\nWhere the time goes, one statement at a time on one connection, nothing else running (µs per statement):\n',
    );
    console.log('| statement | µs |');
    console.log('|---|---:|');
    for (const [name, us] of Object.entries(costs)) console.log(`| ${name} | ${fmt(us)} |`);
    const causal =
      costs['read, Galera node, wsrep_sync_wait = 1'] -
      costs['read, Galera node, wsrep_sync_wait = 0'];
    const commit = costs['insert and commit, Galera node'] - costs['insert and commit, one server'];
    console.log(
      `\nA causal read (wsrep_sync_wait = 1) adds ${fmt(causal)} µs to a read (a round of the group communication to learn the cluster's last commit); ` +
        `getTask makes two reads (the key, the task), listProjectTasks two or three. ` +
        `Replicating and certifying a commit adds ${fmt(commit)} µs to it; a create commits once.`,
    );
  } finally {
    for (const instance of instances) await instance.stop().catch(() => {});
    await cluster?.destroy();
    await single?.destroy();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
