/**
 * `make bench`, versions part, on MariaDB: what API versions cost a request. The commit before
 * versions is built beside this checkout (its own source from git, this checkout's node_modules)
 * and serves a database it seeded itself; this checkout's service serves another, read in the
 * newest version (its key's pin) and in the oldest (`Api-Version`). Rounds alternate the three
 * after a warm-up, and each figure is the median of the rounds' CPU per request.
 * Targets (issue 45): at most 5 % more CPU in the newest version, 15 % in the oldest.
 *
 * Two measures: CPU time per request (rounds of a fixed length), and instructions per request
 * counted by valgrind's callgrind (rounds of a fixed number of requests, callgrind.ts), which a
 * busy machine does not move. Either is left out with its rounds set to 0.
 *
 * BENCH_VERSIONS_BEFORE (the commit before versions), BENCH_VERSION_OPERATIONS (getTask,
 * updateTask,listProjectTasks), BENCH_VERSION_ROUNDS (9),
 * BENCH_VERSION_SECONDS (4), BENCH_VERSION_CONNECTIONS (8), BENCH_WARMUP_SECONDS (5), BENCH_MYSQL_URL;
 * BENCH_COUNTED_ROUNDS (4), BENCH_COUNTED_REQUESTS (500 a round), BENCH_COUNTED_WARMUP (1,500
 * requests), BENCH_COUNTED_IDLE_SECONDS (20).
 * More, shorter rounds than the other parts, and fewer connections than they use: five rounds of
 * 5 s at 16 connections differed by up to 40 % for one target, more than the 5 % to be told apart.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../src/paths';
import { newestVersion, supportedVersions } from '../../src/versions/versions';
import { createMysqlDatabase } from '../support/mysql-database';
import { operations, seedFixture, withKnex, type Fixture } from './fixture';
import { startCountedServer, type CountedServer, type Instructions } from './callgrind';
import { drive, type Operation } from './load';
import { serviceArguments, startServerProcess, type ServerProcess } from './processes';
import { fmt, mark } from './report';

/** 2b17abd is the parent of 4462e25, which put a version on every request. */
const beforeVersions = process.env.BENCH_VERSIONS_BEFORE ?? '2b17abd';
const settings = {
  mysqlUrl: process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/',
  connections: Number(process.env.BENCH_VERSION_CONNECTIONS ?? 8),
  seconds: Number(process.env.BENCH_VERSION_SECONDS ?? 4),
  rounds: Number(process.env.BENCH_VERSION_ROUNDS ?? 9),
  warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 5),
  countedRounds: Number(process.env.BENCH_COUNTED_ROUNDS ?? 4),
  countedRequests: Number(process.env.BENCH_COUNTED_REQUESTS ?? 500),
  countedWarmup: Number(process.env.BENCH_COUNTED_WARMUP ?? 1500),
  countedIdleSeconds: Number(process.env.BENCH_COUNTED_IDLE_SECONDS ?? 20),
};
const measured = (
  process.env.BENCH_VERSION_OPERATIONS ?? 'getTask,updateTask,listProjectTasks'
).split(',');
const oldestVersion = supportedVersions[supportedVersions.length - 1];
const serviceEnv = { RATE_LIMIT_PER_MINUTE: '999999999', LOG_LEVEL: 'info' };

function run(command: string, args: string[], cwd: string, input?: Buffer): Buffer {
  const result = spawnSync(command, args, { cwd, input, maxBuffer: 1 << 30 });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} failed: ${String(result.stderr)}`);
  return result.stdout;
}

/**
 * The commit's service and bench fixture, built once into a folder of the system's temporary
 * files and kept there for the next run. The dependencies are this checkout's: the commit's
 * lockfile is the same.
 */
function buildCommit(commit: string): string {
  const full = String(run('git', ['rev-parse', '--verify', `${commit}^{commit}`], projectRoot))
    .trim()
    .slice(0, 12);
  const root = path.join(os.tmpdir(), `tt-bench-commit-${full}`);
  if (fs.existsSync(path.join(root, 'dist', 'test', 'bench', 'fixture.js'))) return root;
  fs.rmSync(root, { recursive: true, force: true });
  fs.mkdirSync(root, { recursive: true });
  run('tar', ['-x', '-C', root], root, run('git', ['archive', full], projectRoot));
  fs.symlinkSync(path.join(projectRoot, 'node_modules'), path.join(root, 'node_modules'));
  const tsc = path.join(projectRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  run(process.execPath, [tsc, '-p', 'tsconfig.build.json'], root);
  run(process.execPath, [tsc, '-p', 'test/bench/tsconfig.json'], root);
  return root;
}

interface Target {
  name: string;
  server: ServerProcess;
  fixture: Fixture;
  headers?: Record<string, string>;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

const operationOf = (target: { fixture: Fixture }, operationName: string): Operation =>
  operations(target.fixture).find(({ name }) => name === operationName)!;

/** Each target's CPU µs per request and requests per second, a figure per round, rounds alternating. */
async function measure(targets: Target[], operationName: string) {
  const load = (target: Target, seconds: number) => ({
    connections: settings.connections,
    seconds,
    headers: target.headers,
  });
  const next = targets.map((target) => operationOf(target, operationName));
  for (const [i, target] of targets.entries())
    await drive(
      target.server.url,
      target.fixture.key,
      next[i],
      load(target, settings.warmupSeconds),
    );
  const cpu: number[][] = targets.map(() => []);
  const rates: number[][] = targets.map(() => []);
  for (let round = 0; round < settings.rounds; round++)
    for (const [i, target] of targets.entries()) {
      const before = target.server.cpuSeconds();
      const result = await drive(
        target.server.url,
        target.fixture.key,
        next[i],
        load(target, settings.seconds),
      );
      cpu[i].push(((target.server.cpuSeconds() - before) * 1e6) / result.requests);
      rates[i].push(result.requestsPerSecond);
    }
  return targets.map((_, i) => ({ cpuUs: median(cpu[i]), rate: median(rates[i]), rounds: cpu[i] }));
}

interface CountedTarget extends Omit<Target, 'server'> {
  counted: CountedServer;
}

/**
 * Each target's instructions per request under callgrind: after a warm-up with counting off,
 * rounds of a fixed number of requests alternate between the targets. The figure is the median
 * round's `running` plus the collector's work over all rounds together (it comes in lumps); what V8
 * still compiles after the warm-up is shown apart.
 */
async function count(targets: CountedTarget[], operationName: string) {
  const next = targets.map((target) => operationOf(target, operationName));
  const load = (target: CountedTarget, i: number, requests: number) => () =>
    drive(target.counted.server.url, target.fixture.key, next[i], {
      connections: 4,
      seconds: 3600,
      // Under valgrind a request takes some fifty times as long, and more on a busy machine.
      timeoutSeconds: 120,
      requests,
      headers: target.headers,
    });
  for (const [i, target] of targets.entries()) await load(target, i, settings.countedWarmup)();
  const idle = (seconds: number) => () =>
    new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const idlePerSecond: number[] = [];
  for (const target of targets) {
    const counted = await target.counted.count(idle(settings.countedIdleSeconds));
    idlePerSecond.push(counted.running / counted.seconds);
  }
  const rounds: Instructions[][] = targets.map(() => []);
  for (let round = 0; round < settings.countedRounds; round++)
    for (const [i, target] of targets.entries())
      rounds[i].push(await target.counted.count(load(target, i, settings.countedRequests)));
  const requests = settings.countedRounds * settings.countedRequests;
  return rounds.map((counted, i) => {
    const running = counted.map(
      (c) => (c.running - idlePerSecond[i] * c.seconds) / settings.countedRequests,
    );
    const collecting = counted.reduce((sum, c) => sum + c.collecting, 0) / requests;
    const compiling = counted.reduce((sum, c) => sum + c.compiling, 0) / requests;
    // V8 compiles a function once it has run enough, once per process: what the rounds still
    // compile is warm-up the service pays once, not per request, and is shown apart.
    return {
      perRequest: median(running) + collecting,
      running,
      collecting,
      compiling,
      idle: idlePerSecond[i],
    };
  });
}

/** The three targets: the commit before versions, this checkout in the newest version and in the oldest. */
function targetsOf<T>(before: T, now: T, fixtures: { before: Fixture; now: Fixture }) {
  return [
    { name: 'before versions', ...before, fixture: fixtures.before },
    // A tenant made now is pinned to the newest version: no header, as its clients send none.
    { name: newestVersion, ...now, fixture: fixtures.now },
    {
      name: oldestVersion,
      ...now,
      fixture: fixtures.now,
      headers: { 'Api-Version': oldestVersion },
    },
  ];
}

async function main(): Promise<void> {
  const builtAt = performance.now();
  const beforeRoot = buildCommit(beforeVersions);
  const buildSeconds = (performance.now() - builtAt) / 1000;
  // The commit's own fixture migrates and seeds its database with its own migrations.
  const before = (await import(path.join(beforeRoot, 'dist', 'test', 'bench', 'fixture.js'))) as {
    seedFixture: typeof seedFixture;
    withKnex: typeof withKnex;
  };
  const beforeDatabase = await createMysqlDatabase(settings.mysqlUrl, 'tt_bench_before_versions');
  const database = await createMysqlDatabase(settings.mysqlUrl, 'tt_bench_versions');
  const servers: ServerProcess[] = [];
  try {
    const fixtures = {
      before: await before.withKnex(beforeDatabase.config, (knex) =>
        before.seedFixture(knex, 1000),
      ),
      now: await withKnex(database.config, (knex) => seedFixture(knex, 1000)),
    };
    const url = (config: unknown) => (config as { url: string }).url;
    const beforeEnv = { ...serviceEnv, DATABASE_URL: url(beforeDatabase.config) };
    const nowEnv = { ...serviceEnv, DATABASE_URL: url(database.config) };
    const timed = [];
    if (settings.rounds > 0) {
      const beforeServer = await startServerProcess(serviceArguments(beforeRoot), beforeEnv);
      servers.push(beforeServer);
      const server = await startServerProcess(serviceArguments(), nowEnv);
      servers.push(server);
      const targets: Target[] = targetsOf({ server: beforeServer }, { server }, fixtures);
      for (const operation of measured)
        timed.push({ operation, figures: await measure(targets, operation) });
      for (const server of servers.splice(0)) await server.stop();
    }
    const counted = [];
    if (settings.countedRounds > 0) {
      const beforeCounted = await startCountedServer(serviceArguments(beforeRoot), beforeEnv);
      servers.push(beforeCounted.server);
      const nowCounted = await startCountedServer(serviceArguments(), nowEnv);
      servers.push(nowCounted.server);
      const targets: CountedTarget[] = targetsOf(
        { counted: beforeCounted },
        { counted: nowCounted },
        fixtures,
      );
      for (const operation of measured)
        counted.push({ operation, figures: await count(targets, operation) });
    }
    report(buildSeconds, timed, counted);
  } finally {
    for (const server of servers) await server.stop();
    await beforeDatabase.drop();
    await database.drop();
  }
}

type Timed = { operation: string; figures: Awaited<ReturnType<typeof measure>> }[];
type Counted = { operation: string; figures: Awaited<ReturnType<typeof count>> }[];

function report(buildSeconds: number, timed: Timed, counted: Counted): void {
  console.log(`\n## MariaDB: what API versions cost a request\n`);
  console.log(
    `Against \`${beforeVersions}\`, the commit before versions (built in ${fmt(buildSeconds)} s, kept for the next run), each on a database of its own. ` +
      `The newest version is the key's pin (no header); ${oldestVersion} is asked for with \`Api-Version\`.\n`,
  );
  if (counted.length > 0) {
    console.log(
      `Instructions per request, counted by valgrind's callgrind (a count does not move with the machine's load): ${settings.countedWarmup} requests of warm-up uncounted, then ${settings.countedRounds} alternating rounds of ${settings.countedRequests} requests per target at 4 connections; ` +
        `each figure is the median round's instructions outside V8's collector and compilers, less what the service runs idle in as long (counted for ${settings.countedIdleSeconds} s before the rounds), plus the collector's over all rounds together (it comes in lumps). V8's compilers, shown apart and not counted: what is still compiled after the warm-up is code getting hot, compiled once per process rather than per request.\n`,
    );
    console.log(
      `| operation | instructions per request before versions | in ${newestVersion} | ratio (≤ 1.05) | in ${oldestVersion} | ratio (≤ 1.15) | collector before / ${newestVersion} / ${oldestVersion} | compilers, not counted | idle, a second | the rest, each round (before; newest; oldest) |`,
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---|');
    const k = (n: number) => `${fmt(n / 1000)} k`;
    for (const { operation, figures } of counted) {
      const [was, newest, oldest] = figures;
      const newestRatio = newest.perRequest / was.perRequest;
      const oldestRatio = oldest.perRequest / was.perRequest;
      console.log(
        `| ${operation} | ${k(was.perRequest)} | ${k(newest.perRequest)} | ${fmt(newestRatio, 3)} ${mark(newestRatio <= 1.05)} | ` +
          `${k(oldest.perRequest)} | ${fmt(oldestRatio, 3)} ${mark(oldestRatio <= 1.15)} | ` +
          `${figures.map(({ collecting }) => k(collecting)).join(' / ')} | ${figures.map(({ compiling }) => k(compiling)).join(' / ')} | ${figures.map(({ idle }) => k(idle)).join(' / ')} | ` +
          `${figures.map(({ running }) => running.map(k).join(', ')).join('; ')} |`,
      );
    }
  }
  if (timed.length > 0) {
    console.log(
      `\nCPU time per request: ${settings.rounds} alternating rounds of ${settings.seconds} s per target after ${settings.warmupSeconds} s of warm-up, ${settings.connections} connections; the medians of the rounds.\n`,
    );
    console.log(
      `| operation | CPU µs per request before versions | in ${newestVersion} | ratio (≤ 1.05) | in ${oldestVersion} | ratio (≤ 1.15) | req/s before / ${newestVersion} / ${oldestVersion} | CPU µs of each round (before; newest; oldest) |`,
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---|');
    for (const { operation, figures } of timed) {
      const [was, newest, oldest] = figures;
      const newestRatio = newest.cpuUs / was.cpuUs;
      const oldestRatio = oldest.cpuUs / was.cpuUs;
      console.log(
        `| ${operation} | ${fmt(was.cpuUs)} | ${fmt(newest.cpuUs)} | ${fmt(newestRatio, 3)} ${mark(newestRatio <= 1.05)} | ` +
          `${fmt(oldest.cpuUs)} | ${fmt(oldestRatio, 3)} ${mark(oldestRatio <= 1.15)} | ` +
          `${figures.map(({ rate }) => fmt(rate)).join(' / ')} | ${figures.map(({ rounds }) => rounds.map((us) => fmt(us)).join(', ')).join('; ')} |`,
      );
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
