/**
 * `make bench`, versions part, on MariaDB: what API versions cost a request. The commit before
 * versions is built beside this checkout (its own source from git, this checkout's node_modules)
 * and serves a database it seeded itself; this checkout's service serves another, read in the
 * newest version (its key's pin) and in the oldest (`Api-Version`). Rounds alternate the three
 * after a warm-up, and each figure is the median of the rounds' CPU per request.
 * Targets (issue 45): at most 5 % more CPU in the newest version, 15 % in the oldest.
 *
 * BENCH_VERSIONS_BEFORE (the commit before versions), BENCH_VERSION_ROUNDS (9),
 * BENCH_VERSION_SECONDS (4), BENCH_VERSION_CONNECTIONS (8), BENCH_WARMUP_SECONDS (5), BENCH_MYSQL_URL.
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
};
const measured = ['getTask', 'updateTask', 'listProjectTasks'];
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

/** Each target's CPU µs per request and requests per second, a figure per round, rounds alternating. */
async function measure(targets: Target[], operationName: string) {
  const operationOf = (target: Target): Operation =>
    operations(target.fixture).find(({ name }) => name === operationName)!;
  const load = (target: Target, seconds: number) => ({
    connections: settings.connections,
    seconds,
    headers: target.headers,
  });
  const next = targets.map(operationOf);
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
    const beforeFixture = await before.withKnex(beforeDatabase.config, (knex) =>
      before.seedFixture(knex, 1000),
    );
    const fixture = await withKnex(database.config, (knex) => seedFixture(knex, 1000));
    const url = (config: unknown) => (config as { url: string }).url;
    const beforeServer = await startServerProcess(serviceArguments(beforeRoot), {
      ...serviceEnv,
      DATABASE_URL: url(beforeDatabase.config),
    });
    servers.push(beforeServer);
    const server = await startServerProcess(serviceArguments(), {
      ...serviceEnv,
      DATABASE_URL: url(database.config),
    });
    servers.push(server);
    const targets: Target[] = [
      { name: 'before versions', server: beforeServer, fixture: beforeFixture },
      // A tenant made now is pinned to the newest version: no header, as its clients send none.
      { name: newestVersion, server, fixture },
      { name: oldestVersion, server, fixture, headers: { 'Api-Version': oldestVersion } },
    ];
    const rows = [];
    for (const operation of measured)
      rows.push({ operation, figures: await measure(targets, operation) });

    console.log(`\n## MariaDB: what API versions cost a request\n`);
    console.log(
      `Against \`${beforeVersions}\`, the commit before versions (built in ${fmt(buildSeconds)} s, kept for the next run), each on a database of its own; ` +
        `${settings.rounds} alternating rounds of ${settings.seconds} s per target after ${settings.warmupSeconds} s of warm-up, ${settings.connections} connections; the medians of the rounds. ` +
        `The newest version is the key's pin (no header); ${oldestVersion} is asked for with \`Api-Version\`.\n`,
    );
    console.log(
      `| operation | CPU µs per request before versions | in ${newestVersion} | ratio (≤ 1.05) | in ${oldestVersion} | ratio (≤ 1.15) | req/s before / ${newestVersion} / ${oldestVersion} | CPU µs of each round (before; newest; oldest) |`,
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---|');
    for (const { operation, figures } of rows) {
      const [was, newest, oldest] = figures;
      const newestRatio = newest.cpuUs / was.cpuUs;
      const oldestRatio = oldest.cpuUs / was.cpuUs;
      console.log(
        `| ${operation} | ${fmt(was.cpuUs)} | ${fmt(newest.cpuUs)} | ${fmt(newestRatio, 3)} ${mark(newestRatio <= 1.05)} | ` +
          `${fmt(oldest.cpuUs)} | ${fmt(oldestRatio, 3)} ${mark(oldestRatio <= 1.15)} | ` +
          `${figures.map(({ rate }) => fmt(rate)).join(' / ')} | ${figures.map(({ rounds }) => rounds.map((us) => fmt(us)).join(', ')).join('; ')} |`,
      );
    }
  } finally {
    for (const server of servers) await server.stop();
    await beforeDatabase.drop();
    await database.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
