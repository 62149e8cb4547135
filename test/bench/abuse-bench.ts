/**
 * `make bench`, abuse part (issue 11's figures): 50 clients that ask for the largest pages and
 * read none of them, against the service's memory and its health check; and what refused bodies
 * of up to 64 KiB (floods of fields, flat and nested, deep arrays, another charset) cost the
 * service against a small invalid one. Then issue 20's fences: (a) a webhook fan-out against
 * another tenant (webhook-fanout-bench.ts), (b) one address holding idle sockets against another's
 * requests, (c) the long polls the limits allow, with writes; and issue 29's: (d) a tenant's silent
 * name server (dns-bench.ts), (e) many addresses holding half-open sockets.
 *
 * BENCH_IDLE_SECONDS (15) and BENCH_IDLE_SOCKETS (1000) for (b) and (e); BENCH_POLL_SECONDS (10),
 * BENCH_POLL_ROUNDS (2), BENCH_POLL_TENANTS (5) and BENCH_POLL_WRITES (writes/s, 5) for (c).
 */
import net from 'node:net';
import { createMysqlDatabase } from '../support/mysql-database';
import { seedFixture, withKnex, type Fixture } from './fixture';
import { serviceArguments, startServerProcess, type ServerProcess } from './processes';
import { fmt, mark } from './report';
import { halfOpenFromManyAddresses, idleSocketsFromOneAddress } from './connections-bench';
import { slowNameServer } from './dns-bench';
import { longPollsWithWrites } from './long-polls-bench';
import { webhookFanout } from './webhook-fanout-bench';

const mysqlUrl = process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';
/** The fences at their defaults, spelled out: the figures below are printed against them. */
const fences = { perAddress: 100, perKey: 10, perTenant: 50, maxConnections: 1000 };
const serviceEnv = {
  RATE_LIMIT_PER_MINUTE: '0',
  AUTH_FAILURES_PER_MINUTE: '0',
  LOG_LEVEL: 'info',
  MAX_CONNECTIONS_PER_ADDRESS: String(fences.perAddress),
  MAX_CONNECTIONS: String(fences.maxConnections),
  LONG_POLLS_PER_KEY: String(fences.perKey),
  LONG_POLLS_PER_TENANT: String(fences.perTenant),
};
const envNumber = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

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
  console.log(
    `\n## 50 clients reading none of their largest pages (10 pipelined pages of 200 tasks × 10,000 characters each), 15 s\n`,
  );
  console.log(
    `- service peak RSS ${fmt(rss)} MB (< 250: ${mark(rss < 250)}); /healthz p50 ${fmt(percentile(health, 50), 1)} ms, p99 ${fmt(percentile(health, 99), 1)} ms, worst ${fmt(worst, 1)} ms (< 100: ${mark(worst < 100)})`,
  );
}

interface Refused {
  label: string;
  path: string;
  contentType: string;
  body: string | Buffer;
  status: number;
}

/** CPU per request for a body, over `count` requests sent one after another. */
async function cpuPerRequest(
  service: ServerProcess,
  key: string,
  { path, contentType, body, status }: Refused,
  count: number,
): Promise<number> {
  const before = service.cpuSeconds();
  for (let i = 0; i < count; i++) {
    const response = await fetch(`${service.url}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': contentType },
      body,
    });
    if (response.status !== status) throw new Error(`expected ${status}, got ${response.status}`);
    await response.arrayBuffer();
  }
  return ((service.cpuSeconds() - before) * 1e6) / count;
}

/** Bodies of up to 64 KiB that are refused, each to be set against a small invalid body. */
function refusedBodies(): Refused[] {
  const fields = (count: number) =>
    Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i}`, 1]));
  const json = 'application/json';
  const project = (label: string, body: string | Buffer, contentType = json, status = 400) => ({
    label,
    path: '/v1/projects',
    contentType,
    body,
    status,
  });
  const deep = 32_000;
  return [
    project('6,300 unknown fields', JSON.stringify(fields(6300))),
    project(
      '6,300 fields nested in one unknown field',
      JSON.stringify({ name: 'x', extra: fields(6300) }),
    ),
    project('6,300 fields nested in the name', JSON.stringify({ name: fields(6300) })),
    project(
      '10,000 numbers in an unknown field',
      JSON.stringify({ name: 'x', extra: Array.from({ length: 10_000 }, (_, i) => i) }),
    ),
    project(
      `an array ${fmt(deep)} deep in the name`,
      `{"name":${'['.repeat(deep)}${']'.repeat(deep)}}`,
    ),
    project(
      '3,000 nested fields in charset=utf-16le',
      Buffer.from(JSON.stringify({ name: 'x', extra: fields(3000) }), 'utf16le'),
      `${json}; charset=utf-16le`,
      415,
    ),
    {
      label: '4,000 event types in a webhook endpoint',
      path: '/v1/webhook-endpoints',
      contentType: json,
      body: JSON.stringify({
        url: 'https://example.com/h',
        event_types: Array.from({ length: 4000 }, () => 'task.created'),
      }),
      status: 400,
    },
  ];
}

async function validationCost(service: ServerProcess, fixture: Fixture): Promise<void> {
  const small: Refused = {
    label: 'small',
    path: '/v1/projects',
    contentType: 'application/json',
    body: JSON.stringify({ name: '', colour: 'red' }),
    status: 400,
  };
  const median = (values: number[]) =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  console.log(
    `\n## Refused bodies of up to 64 KiB against a small invalid body (CPU per request, median of 4 alternating rounds of 300)\n`,
  );
  for (const refused of refusedBodies()) {
    const rounds = { refused: [] as number[], small: [] as number[] };
    for (let round = 0; round < 4; round++) {
      rounds.refused.push(await cpuPerRequest(service, fixture.key, refused, 300));
      rounds.small.push(await cpuPerRequest(service, fixture.key, small, 300));
    }
    const [refusedUs, smallUs] = [median(rounds.refused), median(rounds.small)];
    const ratio = refusedUs / smallUs;
    console.log(
      `- ${refused.label} (${fmt(refused.body.length / 1024)} KB, ${refused.status}): ${fmt(refusedUs)} µs against ${fmt(smallUs)} µs: ${fmt(ratio, 1)}× (≤ 3: ${mark(ratio <= 3)})`,
    );
  }
}

async function main(): Promise<void> {
  const database = await createMysqlDatabase(mysqlUrl, 'tt_bench_abuse');
  try {
    const fixture = await withKnex(database.config, async (knex) => {
      const seeded = await seedFixture(knex, 200);
      await knex('tasks')
        .whereIn('task_id', seeded.taskIds)
        .update({ description: 'x'.repeat(10_000) });
      return seeded;
    });
    const service = await startServerProcess(serviceArguments(), {
      ...serviceEnv,
      DATABASE_URL: (database.config as { url: string }).url,
    });
    try {
      await validationCost(service, fixture);
      await slowReaders(service, fixture);
      await idleSocketsFromOneAddress(service, fixture.key, {
        seconds: envNumber('BENCH_IDLE_SECONDS', 15),
        sockets: envNumber('BENCH_IDLE_SOCKETS', 1000),
        perAddress: fences.perAddress,
      });
      await halfOpenFromManyAddresses(service, fixture.key, {
        seconds: envNumber('BENCH_IDLE_SECONDS', 15),
        addresses: 12,
        perAddress: fences.perAddress,
        maxConnections: fences.maxConnections,
      });
      await withKnex(database.config, (knex) =>
        longPollsWithWrites(service, knex, {
          seconds: envNumber('BENCH_POLL_SECONDS', 10),
          rounds: envNumber('BENCH_POLL_ROUNDS', 2),
          tenants: envNumber('BENCH_POLL_TENANTS', 5),
          writesPerSecond: envNumber('BENCH_POLL_WRITES', 5),
          perKey: fences.perKey,
          perTenant: fences.perTenant,
        }),
      );
    } finally {
      await service.stop();
    }
  } finally {
    await database.drop();
  }
  await webhookFanout(mysqlUrl);
  await slowNameServer(mysqlUrl);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
