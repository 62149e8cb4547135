/**
 * `make bench`, abuse part (issue 11's figures): 50 clients that ask for the largest pages and
 * read none of them, against the service's memory and its health check; and what a huge invalid
 * body costs the service against a small one.
 */
import net from 'node:net';
import { createMysqlDatabase } from '../support/mysql-database';
import { seedFixture, withKnex, type Fixture } from './fixture';
import { serviceArguments, startServerProcess, type ServerProcess } from './processes';
import { fmt, mark } from './report';

const mysqlUrl = process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';
const serviceEnv = { RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURES_PER_MINUTE: '0', LOG_LEVEL: 'info' };
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** 50 connections each pipeline 10 requests for a page of 200 tasks of 10,000 characters, and read nothing. */
async function slowReaders(service: ServerProcess, fixture: Fixture): Promise<void> {
  const { port } = new URL(service.url);
  const request = `GET /v1/projects/${fixture.listedProjectId}/tasks?limit=200 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${fixture.key}\r\n\r\n`;
  const sockets = Array.from({ length: 50 }, () => {
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.on('connect', () => {
      socket.pause();
      socket.write(request.repeat(10));
    });
    socket.on('error', () => {});
    return socket;
  });
  const health: number[] = [];
  const deadline = performance.now() + 15_000;
  while (performance.now() < deadline) {
    const started = performance.now();
    await fetch(`${service.url}/healthz`);
    health.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  for (const socket of sockets) socket.destroy();
  health.sort((a, b) => a - b);
  const rss = service.peakRssMb();
  const worst = health[health.length - 1];
  console.log(`\n## 50 clients reading none of their largest pages (10 pipelined pages of 200 tasks × 10,000 characters each), 15 s\n`);
  console.log(`- service peak RSS ${fmt(rss)} MB (< 250: ${mark(rss < 250)}); /healthz p50 ${fmt(percentile(health, 50), 1)} ms, p99 ${fmt(percentile(health, 99), 1)} ms, worst ${fmt(worst, 1)} ms (< 100: ${mark(worst < 100)})`);
}

/** CPU per request for a body, over `count` requests sent one after another. */
async function cpuPerRequest(service: ServerProcess, key: string, body: string, count: number): Promise<number> {
  const before = service.cpuSeconds();
  for (let i = 0; i < count; i++) {
    const response = await fetch(`${service.url}/v1/projects`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body });
    if (response.status !== 400) throw new Error(`expected 400, got ${response.status}`);
    await response.arrayBuffer();
  }
  return ((service.cpuSeconds() - before) * 1e6) / count;
}

async function validationCost(service: ServerProcess, fixture: Fixture): Promise<void> {
  const huge = JSON.stringify(Object.fromEntries(Array.from({ length: 6300 }, (_, i) => [`f${i}`, 1])));
  const small = JSON.stringify({ name: '', colour: 'red' });
  const rounds = { huge: [] as number[], small: [] as number[] };
  for (let round = 0; round < 4; round++) {
    rounds.huge.push(await cpuPerRequest(service, fixture.key, huge, 400));
    rounds.small.push(await cpuPerRequest(service, fixture.key, small, 400));
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const [hugeUs, smallUs] = [median(rounds.huge), median(rounds.small)];
  const ratio = hugeUs / smallUs;
  console.log(`\n## An invalid body of ${fmt(huge.length / 1024)} KB with 6,300 unknown fields against a small invalid body (CPU per request, median of 4 alternating rounds)\n`);
  console.log(`- ${fmt(hugeUs)} µs against ${fmt(smallUs)} µs: ${fmt(ratio, 1)}× (≤ 3: ${mark(ratio <= 3)})`);
}

async function main(): Promise<void> {
  const database = await createMysqlDatabase(mysqlUrl, 'tt_bench_abuse');
  try {
    const fixture = await withKnex(database.config, async (knex) => {
      const seeded = await seedFixture(knex, 200);
      await knex('tasks').whereIn('task_id', seeded.taskIds).update({ description: 'x'.repeat(10_000) });
      return seeded;
    });
    const service = await startServerProcess(serviceArguments(), { ...serviceEnv, DATABASE_URL: (database.config as { url: string }).url });
    try {
      await validationCost(service, fixture);
      await slowReaders(service, fixture);
    } finally {
      await service.stop();
    }
  } finally {
    await database.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
