/**
 * `make bench`, webhooks part, on MariaDB: one endpoint on a local receiver that answers at once.
 * 1. The create rate without an endpoint, then with one (what planning deliveries costs a write).
 * 2. At the peak create rate, and at half of it, the delay from each create's 2xx to its delivery
 *    arriving, p50 and p99, and whether delivery keeps up (how long after the writers stop the
 *    last delivery arrives).
 * 3. Deliveries per second from a backlog of planned attempts, timed from enabling the endpoint
 *    until the receiver has them all.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { v7 as uuidv7 } from 'uuid';
import { numbered } from '../../src/db/events-repository';
import { nowForDb } from '../../src/db/timestamps';
import { createMysqlDatabase } from '../support/mysql-database';
import { seedFixture, withKnex, type Fixture } from './fixture';
import { serviceArguments, startServerProcess, type ServerProcess } from './processes';
import { fmt, mark } from './report';

const mysqlUrl = process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const backlog = Number(process.env.BENCH_WEBHOOK_BACKLOG ?? 5000);
const serviceEnv = {
  RATE_LIMIT_PER_MINUTE: '999999999',
  LOG_LEVEL: 'warn',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
};

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** A receiver that answers 204 at once and notes when each task's delivery arrived. */
async function startReceiver() {
  const arrivedAt = new Map<string, number>();
  let deliveries = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const now = performance.now();
      deliveries++;
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        data: { object: { task_id?: string } };
      };
      const taskId = event.data.object.task_id;
      if (taskId !== undefined && !arrivedAt.has(taskId)) arrivedAt.set(taskId, now);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivedAt,
    deliveries: () => deliveries,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Creates tasks with `connections` writers for `ms`, as fast as the service answers or, given
 * `perSecond`, at that rate; when each create's 201 came, by task id.
 */
async function createFor(
  url: string,
  fixture: Fixture,
  ms: number,
  perSecond?: number,
): Promise<Map<string, number>> {
  const headers = { Authorization: `Bearer ${fixture.key}`, 'Content-Type': 'application/json' };
  const body = JSON.stringify({ project_id: fixture.emptyProjectId, title: 'delivered' });
  const acknowledgedAt = new Map<string, number>();
  const started = performance.now();
  const deadline = started + ms;
  let sent = 0;
  const writer = async () => {
    while (performance.now() < deadline) {
      if (perSecond !== undefined) {
        const due = started + (sent++ * 1000) / perSecond;
        if (due > performance.now())
          await new Promise((resolve) => setTimeout(resolve, due - performance.now()));
        if (performance.now() >= deadline) return;
      }
      const response = await fetch(`${url}/v1/tasks`, { method: 'POST', headers, body });
      const task = (await response.json()) as { task_id: string };
      if (response.status === 201) acknowledgedAt.set(task.task_id, performance.now());
    }
  };
  await Promise.all(Array.from({ length: connections }, writer));
  return acknowledgedAt;
}

/** Creates for `seconds` (at `perSecond`, or as fast as the service answers) and follows each create to its delivery. */
async function deliveryDelays(
  url: string,
  fixture: Fixture,
  receiver: Receiver,
  perSecond?: number,
) {
  const writesStarted = performance.now();
  const acknowledgedAt = await createFor(url, fixture, seconds * 1000, perSecond);
  const writesEnded = performance.now();
  const deliveredDuring = [...acknowledgedAt.keys()].filter(
    (taskId) => (receiver.arrivedAt.get(taskId) ?? Infinity) <= writesEnded,
  ).length;
  const keptUp = await until(
    () => [...acknowledgedAt.keys()].every((taskId) => receiver.arrivedAt.has(taskId)),
    30_000,
  );
  const lastAfterMs =
    Math.max(
      ...[...acknowledgedAt.keys()].map((taskId) => receiver.arrivedAt.get(taskId) ?? Infinity),
    ) - writesEnded;
  const delays = [...acknowledgedAt]
    .map(([taskId, at]) => (receiver.arrivedAt.get(taskId) ?? Infinity) - at)
    .sort((x, y) => x - y);
  return {
    rate: acknowledgedAt.size / ((writesEnded - writesStarted) / 1000),
    deliveredRate: deliveredDuring / ((writesEnded - writesStarted) / 1000),
    lastAfter: keptUp ? `${fmt(Math.max(0, lastAfterMs))} ms` : '**never (30 s)**',
    p50: percentile(delays, 50),
    p99: percentile(delays, 99),
  };
}

async function until(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!done() && performance.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 10));
  return done();
}

async function webhooksBench(): Promise<void> {
  const database = await createMysqlDatabase(mysqlUrl, 'tt_bench_webhooks');
  const receiver = await startReceiver();
  let service: ServerProcess | undefined;
  try {
    const fixture = await withKnex(database.config, (knex) => seedFixture(knex, 10));
    service = await startServerProcess(serviceArguments(), {
      ...serviceEnv,
      DATABASE_URL: (database.config as { url: string }).url,
    });
    const headers = { Authorization: `Bearer ${fixture.key}`, 'Content-Type': 'application/json' };
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${service!.url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });

    console.log('\n## MariaDB: webhooks (one endpoint, a local receiver answering 204 at once)\n');
    await createFor(service.url, fixture, 2000);
    const cpuBefore = service.cpuSeconds();
    const created = (await createFor(service.url, fixture, seconds * 1000)).size;
    const createCpuUs = ((service.cpuSeconds() - cpuBefore) * 1e6) / created;
    const without = created / seconds;

    const endpoint = (await (
      await call('POST', '/v1/webhook-endpoints', { url: receiver.url })
    ).json()) as { webhook_endpoint_id: string };
    const peak = await deliveryDelays(service.url, fixture, receiver);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const half = await deliveryDelays(service.url, fixture, receiver, peak.rate / 2);
    console.log(
      `Creates without an endpoint: ${fmt(without)}/s; with one, at the peak: ${fmt(peak.rate)}/s (kept ${fmt(peak.rate / without, 2)}).\n`,
    );
    console.log(
      '| create rate | deliveries/s while writing | last delivery after the writers stopped | delay from 2xx to delivery, p50 | p99 (< 1000 ms) |',
    );
    console.log('|---|---:|---:|---:|---:|');
    for (const [name, run] of [
      [`peak, ${fmt(peak.rate)}/s`, peak],
      [`half that, ${fmt(half.rate)}/s`, half],
    ] as const) {
      console.log(
        `| ${name} | ${fmt(run.deliveredRate)} | ${run.lastAfter} | ${fmt(run.p50, 1)} ms | ${fmt(run.p99, 1)} ms ${mark(run.p99 < 1000)} |`,
      );
    }

    // Deliveries per second from a backlog: attempts of kept events planned straight into the
    // database while the endpoint is disabled (a disabled endpoint is planned nothing), then enabled.
    await call('PATCH', `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}`, {
      enabled: false,
    });
    const planned = await withKnex(database.config, async (knex) => {
      const eventIds: string[] = await knex('events')
        .where('type', 'task.created')
        .modify(numbered)
        .orderBy('sequence')
        .limit(backlog)
        .pluck('event_id');
      const now = nowForDb();
      const rows = eventIds.map((eventId) => ({
        delivery_id: uuidv7(),
        webhook_endpoint_id: endpoint.webhook_endpoint_id,
        event_id: eventId,
        event_type: 'task.created',
        attempt: 1,
        status: 'pending',
        created_at: now,
        next_attempt_at: now,
      }));
      await knex.batchInsert('webhook_deliveries', rows, 500);
      return rows.length;
    });
    const before = receiver.deliveries();
    const deliveryCpuBefore = service.cpuSeconds();
    const enabledAt = performance.now();
    await call('PATCH', `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}`, { enabled: true });
    const drained = await until(() => receiver.deliveries() - before >= planned, 120_000);
    const tookMs = performance.now() - enabledAt;
    const deliveryCpuUs =
      ((service.cpuSeconds() - deliveryCpuBefore) * 1e6) / (receiver.deliveries() - before);
    console.log(
      `\nFrom a backlog of ${planned} planned attempts: ${fmt((receiver.deliveries() - before) / (tookMs / 1000))} deliveries/s ` +
        `(${drained ? `all in ${fmt(tookMs / 1000, 1)} s` : '**not all within 120 s**'}; at most 10 in flight to the endpoint). ` +
        `Service CPU: ${fmt(deliveryCpuUs)} µs per delivery, against ${fmt(createCpuUs)} µs per create (without an endpoint).`,
    );
  } finally {
    await service?.stop();
    await receiver.stop();
    await database.drop();
  }
}

webhooksBench().catch((error) => {
  console.error(error);
  process.exit(1);
});
