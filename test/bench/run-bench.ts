/**
 * `make bench`: the service against a bare baseline (node:http + mysql2 running the same
 * statements) on one MariaDB, under the same autocannon load, alternating A/B/A/B after a
 * warm-up so drift hits both; beside them the service with LIBRARY_SHIMS=off, so what the shims
 * buy stays measured; then the service alone on the embedded SQLite default. Prints figures and
 * the targets they meet; it asserts nothing about speed.
 *
 * BENCH_MYSQL_URL (default mysql://root@127.0.0.1:3306/), BENCH_CONNECTIONS (16),
 * BENCH_SECONDS per measured round (5), BENCH_ROUNDS (2), BENCH_WARMUP_SECONDS (3).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { statementsByOperation } from './baseline-server';
import { createMysqlDatabase } from '../support/mysql-database';
import { operations, seedFixture, withKnex } from './fixture';
import { drive, type LoadResult, type Operation } from './load';
import { serviceArguments, startServerProcess, type ServerProcess } from './processes';
import { fmt, mark } from './report';
import { serviceStatements } from './service-statements';

const settings = {
  mysqlUrl: process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/',
  connections: Number(process.env.BENCH_CONNECTIONS ?? 16),
  seconds: Number(process.env.BENCH_SECONDS ?? 5),
  rounds: Number(process.env.BENCH_ROUNDS ?? 2),
  warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 3),
};
const listedTasks = 1000;
const baselineScript = path.join(__dirname, 'baseline-server.js');
/** The service as a user runs it, with a rate limit too high to refuse the load (but still counted). */
const serviceEnv = { RATE_LIMIT_PER_MINUTE: '999999999', LOG_LEVEL: 'info' };

interface Figures {
  peak: LoadResult;
  /** The server's CPU time (user and system) per request at peak, in µs. */
  cpuUsPerRequest: number;
  /** p99 at half the service's peak rate. */
  halfRateP99Ms: number;
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const average = (results: LoadResult[]): LoadResult => ({
  requests: results.reduce((sum, r) => sum + r.requests, 0),
  requestsPerSecond: mean(results.map((r) => r.requestsPerSecond)),
  p50Ms: mean(results.map((r) => r.p50Ms)),
  p99Ms: mean(results.map((r) => r.p99Ms)),
});

/** Warms every target, then measures them in turn, round after round, then at half the first's peak. */
async function measure(
  targets: ServerProcess[],
  key: string,
  operation: Operation,
): Promise<Figures[]> {
  const load = { connections: settings.connections, seconds: settings.seconds };
  for (const target of targets)
    await drive(target.url, key, operation, { ...load, seconds: settings.warmupSeconds });
  const runs: LoadResult[][] = targets.map(() => []);
  const cpuSeconds = targets.map(() => 0);
  for (let round = 0; round < settings.rounds; round++) {
    for (const [i, target] of targets.entries()) {
      const cpuBefore = target.cpuSeconds();
      runs[i].push(await drive(target.url, key, operation, load));
      cpuSeconds[i] += target.cpuSeconds() - cpuBefore;
    }
  }
  const peaks = runs.map(average);
  const rate = Math.round(peaks[0].requestsPerSecond / 2);
  const halfRate: number[] = [];
  for (const target of targets)
    halfRate.push((await drive(target.url, key, operation, { ...load, rate })).p99Ms);
  return peaks.map((peak, i) => ({
    peak,
    cpuUsPerRequest: (cpuSeconds[i] * 1e6) / peak.requests,
    halfRateP99Ms: halfRate[i],
  }));
}

function printMysqlTable(rows: Array<{ name: string; service: Figures; baseline: Figures }>): void {
  console.log(
    '| operation | service req/s | baseline req/s | ratio (≥ 0.65) | service p50 / p99 ms | baseline p50 / p99 ms | p99 at half rate, service / baseline ms | ratio (≤ 2) | CPU µs per request, service / baseline | ratio (≤ 2.2) |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const { name, service, baseline } of rows) {
    const ratio = service.peak.requestsPerSecond / baseline.peak.requestsPerSecond;
    const p99Ratio = service.halfRateP99Ms / baseline.halfRateP99Ms;
    const cpuRatio = service.cpuUsPerRequest / baseline.cpuUsPerRequest;
    console.log(
      `| ${name} | ${fmt(service.peak.requestsPerSecond)} | ${fmt(baseline.peak.requestsPerSecond)} | ${fmt(ratio, 2)} ${mark(ratio >= 0.65)} | ` +
        `${fmt(service.peak.p50Ms)} / ${fmt(service.peak.p99Ms)} | ${fmt(baseline.peak.p50Ms)} / ${fmt(baseline.peak.p99Ms)} | ` +
        `${fmt(service.halfRateP99Ms)} / ${fmt(baseline.halfRateP99Ms)} | ${fmt(p99Ratio, 2)} ${mark(p99Ratio <= 2)} | ` +
        `${fmt(service.cpuUsPerRequest)} / ${fmt(baseline.cpuUsPerRequest)} | ${fmt(cpuRatio, 2)} ${mark(cpuRatio <= 2.2)} |`,
    );
  }
}

/** What the library shims buy (src/http/shims, src/db/driver): the service's CPU per request without them, against with. */
function printShimsPrice(rows: Array<{ name: string; service: Figures; shimsOff: Figures }>): void {
  console.log('\n### The library shims: the same service with LIBRARY_SHIMS=off\n');
  console.log('| operation | CPU µs per request, shims off / on | ratio | req/s, shims off / on |');
  console.log('|---|---:|---:|---:|');
  for (const { name, service, shimsOff } of rows)
    console.log(
      `| ${name} | ${fmt(shimsOff.cpuUsPerRequest)} / ${fmt(service.cpuUsPerRequest)} | ${fmt(shimsOff.cpuUsPerRequest / service.cpuUsPerRequest, 2)}× | ${fmt(shimsOff.peak.requestsPerSecond)} / ${fmt(service.peak.requestsPerSecond)} |`,
    );
}

function printProcess(name: string, process: ServerProcess): void {
  const rss = process.peakRssMb();
  console.log(
    `- ${name}: ready ${fmt(process.readyMs)} ms after start (≤ 1500: ${mark(process.readyMs <= 1500)}), peak RSS ${fmt(rss)} MB (≤ 150: ${mark(rss <= 150)})`,
  );
}

async function benchMysql(): Promise<void> {
  const database = await createMysqlDatabase(settings.mysqlUrl, 'tt_bench');
  const databaseUrl = (database.config as { url: string }).url;
  try {
    const fixture = await withKnex(database.config, (knex) => seedFixture(knex, listedTasks));
    // The baseline is only honest while it runs the service's statements.
    const sent = await serviceStatements(databaseUrl, fixture);
    if (JSON.stringify(sent) !== JSON.stringify(statementsByOperation)) {
      throw new Error(
        `The baseline no longer runs the service's statements:\nservice:  ${JSON.stringify(sent, null, 2)}\nbaseline: ${JSON.stringify(statementsByOperation, null, 2)}`,
      );
    }
    const service = await startServerProcess(serviceArguments(), {
      ...serviceEnv,
      DATABASE_URL: databaseUrl,
    });
    const baseline = await startServerProcess([baselineScript], { DATABASE_URL: databaseUrl });
    const shimsOff = await startServerProcess(serviceArguments(), {
      ...serviceEnv,
      DATABASE_URL: databaseUrl,
      LIBRARY_SHIMS: 'off',
    });
    try {
      const rows = [];
      for (const operation of operations(fixture)) {
        const [serviceFigures, baselineFigures, shimsOffFigures] = await measure(
          [service, baseline, shimsOff],
          fixture.key,
          operation,
        );
        rows.push({
          name: operation.name,
          service: serviceFigures,
          baseline: baselineFigures,
          shimsOff: shimsOffFigures,
        });
      }
      console.log(`\n## MariaDB: service against the bare baseline (same statements; checked)\n`);
      printMysqlTable(rows);
      printShimsPrice(rows);
      console.log('');
      printProcess('service', service);
      printProcess('baseline', baseline);
    } finally {
      await service.stop();
      await baseline.stop();
      await shimsOff.stop();
    }
  } finally {
    await database.drop();
  }
}

async function benchSqlite(): Promise<void> {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-bench-'));
  const filename = path.join(folder, 'tasks.sqlite');
  try {
    const fixture = await withKnex({ client: 'sqlite', filename }, (knex) =>
      seedFixture(knex, listedTasks),
    );
    const service = await startServerProcess(serviceArguments(), {
      ...serviceEnv,
      DATABASE_URL: `sqlite:${filename}`,
    });
    try {
      console.log(`\n## Embedded SQLite (the default): the service\n`);
      console.log(
        '| operation | req/s | p50 / p99 ms | p99 at half rate ms | CPU µs per request |',
      );
      console.log('|---|---:|---:|---:|---:|');
      for (const operation of operations(fixture)) {
        const [figures] = await measure([service], fixture.key, operation);
        console.log(
          `| ${operation.name} | ${fmt(figures.peak.requestsPerSecond)} | ${fmt(figures.peak.p50Ms)} / ${fmt(figures.peak.p99Ms)} | ${fmt(figures.halfRateP99Ms)} | ${fmt(figures.cpuUsPerRequest)} |`,
        );
      }
      console.log('');
      printProcess('service', service);
    } finally {
      await service.stop();
    }
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const cpus = os.cpus();
  console.log(`# task-tracker benchmark, ${new Date().toISOString()}`);
  console.log(
    `${cpus.length} × ${cpus[0].model}, ${fmt(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; ` +
      `autocannon ${settings.connections} connections, ${settings.warmupSeconds} s warm-up, ${settings.rounds} rounds of ${settings.seconds} s per target (A/B/A/B); ` +
      `half-rate p99 at half the service's peak.`,
  );
  await benchMysql();
  await benchSqlite();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
