/**
 * `make bench`, webhooks part, on MariaDB: endpoints on a local receiver that answers 204 at once,
 * in four shapes, each on a database and service of its own: one endpoint; ten endpoints of one
 * tenant (each event goes to all ten); the same with every other endpoint in the oldest API version
 * (its deliveries rendered down at each attempt); ten tenants with one endpoint each (the writers
 * spread over them). For each:
 * 1. The create rate without endpoints, and its CPU per create.
 * 2. At the peak create rate (and, for one endpoint, at half of it): deliveries per second while
 *    writing, the delay from each create's 2xx to its delivery, p50 and p99, how long after the
 *    writers stop the last delivery arrives, and how many were sent twice.
 * 3. From a backlog of planned attempts (5,000 in all): deliveries per second, from enabling the
 *    endpoints until the receiver has them all, the share of the endpoint (or tenant) served least
 *    against the one served most over the first half (counted once all are enabled), MariaDB's
 *    statements per delivery, and the service's CPU per delivery. The rate is wanted at four times
 *    the creates' without endpoints, on the same machine: issue 32 asked for 2,000 a second when
 *    this bench created 494 a second, and machines of this kind differ threefold in speed.
 */
import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import { issueApiKey } from '../../src/cli/issue-api-key';
import { numbered } from '../../src/db/event-log';
import { createRepositories } from '../../src/all-repositories';
import { nowForDb } from '../../src/db/timestamps';
import { newestVersion, supportedVersions } from '../../src/versions/versions';
import { createMysqlDatabase } from '../support/mysql-database';
import { seedFixture, withKnex } from './fixture';
import { serviceArguments, startServerProcess, type ServerProcess } from './processes';
import { startReceiver, type Receiver } from './receiver';
import { fmt, mark } from './report';

const mysqlUrl = process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const backlog = Number(process.env.BENCH_WEBHOOK_BACKLOG ?? 5000);
/** Only the shape of this name, or else those whose names contain it (all when unset): for measuring one change quickly. */
const onlyShapes = process.env.BENCH_WEBHOOK_SHAPES;
const chosen = (name: string) =>
  !onlyShapes ||
  (shapeNames.includes(onlyShapes) ? name === onlyShapes : name.includes(onlyShapes));
const serviceEnv = {
  RATE_LIMIT_PER_MINUTE: '999999999',
  LOG_LEVEL: 'warn',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
};

const oldestVersion = supportedVersions[supportedVersions.length - 1];

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Shape {
  name: string;
  tenants: number;
  endpointsPerTenant: number;
  /** Whose shares the backlog compares: each endpoint's, or each tenant's. */
  shares: 'endpoint' | 'tenant';
  halfRate: boolean;
  /** Every other endpoint in the oldest version: each of its deliveries rendered down at the attempt. */
  twoVersions?: boolean;
}

const shapes: Shape[] = [
  { name: 'one endpoint', tenants: 1, endpointsPerTenant: 1, shares: 'endpoint', halfRate: true },
  {
    name: '10 endpoints of one tenant',
    tenants: 1,
    endpointsPerTenant: 10,
    shares: 'endpoint',
    halfRate: false,
  },
  {
    name: `10 endpoints of one tenant, half in ${oldestVersion}`,
    tenants: 1,
    endpointsPerTenant: 10,
    shares: 'endpoint',
    halfRate: false,
    twoVersions: true,
  },
  {
    name: '10 tenants, one endpoint each',
    tenants: 10,
    endpointsPerTenant: 1,
    shares: 'tenant',
    halfRate: false,
  },
];

const shapeNames = shapes.map(({ name }) => name);

interface Tenant {
  key: string;
  projectId: string;
  endpoints: Array<{ id: string; path: string }>;
}

/** A tenant of its own with a key and a project to create tasks in. */
async function seedTenant(knex: Knex, name: string): Promise<Tenant> {
  const repositories = createRepositories(knex);
  const { key, tenant } = await issueApiKey(repositories, name, ['read', 'write']);
  const { tenant_id: tenantId } = await repositories.tenants.findOrCreate(tenant);
  const project = await repositories.inTransaction('fixture', (write) =>
    repositories.projects.create(tenantId, { name: 'created into', description: '' }, write),
  );
  return { key, projectId: project.value.project_id, endpoints: [] };
}

/**
 * Creates tasks with `connections` writers (spread over the tenants) for `ms`, as fast as the
 * service answers or, given `perSecond`, at that rate: when each create's 2xx came, by event id
 * (the task's `task.created` event is read back from the feed afterwards, see eventIdsOf).
 */
async function createFor(
  url: string,
  tenants: Tenant[],
  ms: number,
  perSecond?: number,
): Promise<Array<{ tenant: Tenant; taskId: string; at: number }>> {
  const created: Array<{ tenant: Tenant; taskId: string; at: number }> = [];
  const started = performance.now();
  const deadline = started + ms;
  let sent = 0;
  const writer = async (tenant: Tenant) => {
    const headers = { Authorization: `Bearer ${tenant.key}`, 'Content-Type': 'application/json' };
    const body = JSON.stringify({ project_id: tenant.projectId, title: 'delivered' });
    while (performance.now() < deadline) {
      if (perSecond !== undefined) {
        const due = started + (sent++ * 1000) / perSecond;
        if (due > performance.now()) await sleep(due - performance.now());
        if (performance.now() >= deadline) return;
      }
      const response = await fetch(`${url}/v1/tasks`, { method: 'POST', headers, body });
      const task = (await response.json()) as { task_id: string };
      if (response.status === 201)
        created.push({ tenant, taskId: task.task_id, at: performance.now() });
    }
  };
  await Promise.all(
    Array.from({ length: connections }, (_, i) => writer(tenants[i % tenants.length])),
  );
  return created;
}

/** The event id of each task's `task.created` event. */
async function eventIdsOf(knex: Knex, taskIds: string[]): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (let i = 0; i < taskIds.length; i += 1000) {
    const chunk = taskIds.slice(i, i + 1000);
    const taskId = "json_unquote(json_extract(data, '$.object.task_id'))";
    const rows: Array<{ event_id: string; task_id: string }> = await knex('events')
      .where('type', 'task.created')
      .whereRaw(`${taskId} in (${chunk.map(() => '?').join(',')})`, chunk)
      .select('event_id', knex.raw(`${taskId} as task_id`));
    for (const row of rows) ids.set(row.task_id, row.event_id);
  }
  return ids;
}

/** The statements MariaDB has run since it started (its `Questions`: BEGIN and COMMIT count too). */
async function statementsRun(knex: Knex): Promise<number> {
  const [rows] = await knex.raw("show global status like 'Questions'");
  return Number(rows[0].Value);
}

async function until(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!done() && performance.now() < deadline) await sleep(10);
  return done();
}

/**
 * From one create's 2xx to its delivery, just after the endpoints are registered: on MySQL the
 * delivery thread starts then (thread-when-needed.ts), once an instance's first endpoint exists.
 */
async function firstDelivery(service: ServerProcess, tenant: Tenant, receiver: Receiver) {
  const before = receiver.deliveries();
  const response = await fetch(`${service.url}/v1/tasks`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${tenant.key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ project_id: tenant.projectId, title: 'first' }),
  });
  const answered = performance.now();
  await response.text();
  await until(() => receiver.deliveries() > before, 30_000);
  return performance.now() - answered;
}

/** Creates for `seconds` (at `perSecond`, or as fast as the service answers) and follows each create to every endpoint. */
async function deliveryDelays(
  service: ServerProcess,
  knex: Knex,
  tenants: Tenant[],
  receiver: Receiver,
  perSecond?: number,
) {
  const twiceBefore = receiver.twice();
  const deliveriesBefore = receiver.deliveries();
  const writesStarted = performance.now();
  const profileFrom = process.hrtime.bigint() / 1000n;
  const created = await createFor(service.url, tenants, seconds * 1000, perSecond);
  const writesEnded = performance.now();
  const profileTo = process.hrtime.bigint() / 1000n;
  const eventIds = await eventIdsOf(
    knex,
    created.map((c) => c.taskId),
  );
  const expected = created.flatMap(({ tenant, taskId, at }) =>
    tenant.endpoints.map((endpoint) => ({ key: `${endpoint.path} ${eventIds.get(taskId)}`, at })),
  );
  // Once as many requests as expected have come, what came is read until every one is there.
  const deadline = performance.now() + 30_000;
  await until(() => receiver.deliveries() - deliveriesBefore >= expected.length, 30_000);
  let arrivedAt = (await receiver.snapshot()).arrivedAt;
  while (!expected.every(({ key }) => arrivedAt.has(key)) && performance.now() < deadline) {
    await sleep(200);
    arrivedAt = (await receiver.snapshot()).arrivedAt;
  }
  const keptUp = expected.every(({ key }) => arrivedAt.has(key));
  const arrivals = expected.map(({ key }) => arrivedAt.get(key) ?? Infinity);
  const deliveredDuring = arrivals.filter((at) => at <= writesEnded).length;
  // Deliveries over their own run, first arrival to last, as the creates' rate is over theirs:
  // counted over the writers' run instead, the last creates' delay (a p50's worth) always falls short.
  const deliveriesTookS = (Math.max(...arrivals) - Math.min(...arrivals)) / 1000;
  const delays = expected.map(({ at }, i) => arrivals[i] - at).sort((x, y) => x - y);
  // Whether deliveries kept up, apart from the pipeline's own delay: the delay of the first
  // second's creates against the last second's. Falling behind, it grows over the run.
  const delaysOfSecond = (from: number) =>
    expected
      .map(({ at }, i) => ({ at, delay: arrivals[i] - at }))
      .filter(({ at }) => at >= from && at < from + 1000)
      .map(({ delay }) => delay)
      .sort((x, y) => x - y);
  const tookS = (writesEnded - writesStarted) / 1000;
  return {
    rate: created.length / tookS,
    deliveredRate: keptUp ? expected.length / deliveriesTookS : 0,
    deliveredWhileWriting: deliveredDuring / tookS,
    wanted: expected.length / tookS,
    lastAfterMs: keptUp ? Math.max(0, Math.max(...arrivals) - writesEnded) : Infinity,
    p50: percentile(delays, 50),
    p50FirstSecond: percentile(delaysOfSecond(writesStarted), 50),
    p50LastSecond: percentile(delaysOfSecond(writesEnded - 1000), 50),
    p99: percentile(delays, 99),
    twice: receiver.twice() - twiceBefore,
    delivered: deliveredDuring,
    profileWindow: `${profileFrom}-${profileTo}`,
  };
}

/** Plans `backlog` attempts (split over the endpoints) straight into the database while the endpoints are disabled, then enables them. */
async function drainBacklog(
  service: ServerProcess,
  knex: Knex,
  tenants: Tenant[],
  receiver: Receiver,
  shape: Shape,
) {
  const patch = (tenant: Tenant, id: string, enabled: boolean) =>
    fetch(`${service.url}/v1/webhook-endpoints/${id}`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${tenant.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ enabled }),
    }).then((response) => response.text());
  for (const tenant of tenants)
    for (const endpoint of tenant.endpoints) await patch(tenant, endpoint.id, false);
  const endpoints = tenants.flatMap((tenant) => tenant.endpoints);
  const perEndpoint = Math.ceil(backlog / endpoints.length);
  const events = async () =>
    Number((await knex('events').where('type', 'task.created').count({ n: '*' }))[0].n);
  while ((await events()) < perEndpoint) await createFor(service.url, tenants, 1000);
  // Let planning finish what the writers left, so that nothing but the backlog is delivered.
  await sleep(1000);
  const eventIds: string[] = await knex('events')
    .where('type', 'task.created')
    .modify(numbered)
    .orderBy('sequence')
    .limit(perEndpoint)
    .pluck('event_id');
  const now = nowForDb();
  const rows = endpoints.flatMap((endpoint) =>
    eventIds.map((eventId) => ({
      delivery_id: uuidv7(),
      webhook_endpoint_id: endpoint.id,
      event_id: eventId,
      event_type: 'task.created',
      attempt: 1,
      status: 'pending',
      created_at: now,
      next_attempt_at: now,
    })),
  );
  await knex.batchInsert('webhook_deliveries', rows, 500);
  const before = receiver.deliveries();
  const statementsBefore = await statementsRun(knex);
  const cpuBefore = service.cpuSeconds();
  const byPathAtStart = await receiver.byPath();
  const enabledAt = performance.now();
  // The clock V8's CPU profiles keep (CLOCK_MONOTONIC), to read the drain alone out of a profile.
  const profileFrom = process.hrtime.bigint() / 1000n;
  // Enabled in one statement, as PATCH enables one (its backlog was planned in the database too):
  // the worker finds enabled endpoints at its looks, 200 ms apart, and of ten enabled by ten
  // requests, those enabled just after one look started a look later (in about one drain in
  // five; once the first alone had made all its 500 before the others began).
  await knex('webhook_endpoints')
    .whereIn(
      'webhook_endpoint_id',
      endpoints.map((endpoint) => endpoint.id),
    )
    .update({ enabled: true, disabled_reason: null, failing_since: null });
  // The shares are counted from when every endpoint has had a delivery: which of them the first
  // claims take first says nothing of how the worker shares.
  let byPathBefore = await receiver.byPath();
  while (
    endpoints.some(
      (endpoint) =>
        (byPathBefore.get(endpoint.path) ?? 0) <= (byPathAtStart.get(endpoint.path) ?? 0),
    ) &&
    performance.now() - enabledAt < 30_000
  ) {
    await sleep(5);
    byPathBefore = await receiver.byPath();
  }
  const sharedFrom = receiver.deliveries();
  await until(() => receiver.deliveries() - sharedFrom >= rows.length / 2, 120_000);
  const byPath = await receiver.byPath();
  // The shares over the first half: each endpoint's, or each tenant's (its endpoints together).
  const share = (paths: string[]) =>
    paths.reduce((sum, path) => sum + (byPath.get(path) ?? 0) - (byPathBefore.get(path) ?? 0), 0);
  const groups =
    shape.shares === 'tenant'
      ? tenants.map((tenant) => tenant.endpoints.map((endpoint) => endpoint.path))
      : endpoints.map((endpoint) => [endpoint.path]);
  const shares = groups.map(share);
  const drained = await until(() => receiver.deliveries() - before >= rows.length, 120_000);
  const tookMs = performance.now() - enabledAt;
  const profileTo = process.hrtime.bigint() / 1000n;
  const delivered = receiver.deliveries() - before;
  return {
    planned: rows.length,
    perSecond: delivered / (tookMs / 1000),
    drained,
    tookMs,
    fairness: Math.min(...shares) / Math.max(...shares),
    cpuUs: ((service.cpuSeconds() - cpuBefore) * 1e6) / delivered,
    // Less the one that reads the count.
    statementsEach: ((await statementsRun(knex)) - statementsBefore - 1) / delivered,
    delivered,
    profileWindow: `${profileFrom}-${profileTo}`,
  };
}

async function runShape(shape: Shape, receiver: Receiver) {
  const database = await createMysqlDatabase(mysqlUrl, 'tt_bench_webhooks');
  let service: ServerProcess | undefined;
  try {
    return await withKnex(database.config, async (knex) => {
      await seedFixture(knex, 10);
      const tenants: Tenant[] = [];
      for (let t = 0; t < shape.tenants; t++) tenants.push(await seedTenant(knex, `bench-${t}`));
      service = await startServerProcess(serviceArguments(), {
        ...serviceEnv,
        DATABASE_URL: (database.config as { url: string }).url,
      });
      await createFor(service.url, tenants, 2000);
      const cpuBefore = service.cpuSeconds();
      const created = (await createFor(service.url, tenants, seconds * 1000)).length;
      const createCpuUs = ((service.cpuSeconds() - cpuBefore) * 1e6) / created;
      const without = created / seconds;
      for (const [t, tenant] of tenants.entries())
        for (let e = 0; e < shape.endpointsPerTenant; e++) {
          const path = `/hook/${t}/${e}`;
          const response = await fetch(`${service.url}/v1/webhook-endpoints`, {
            method: 'POST',
            headers: {
              Authorization: `Bearer ${tenant.key}`,
              'Content-Type': 'application/json',
              // An endpoint is made in the version of the request that registers it.
              'Api-Version': shape.twoVersions && e % 2 === 1 ? oldestVersion : newestVersion,
            },
            body: JSON.stringify({ url: `${receiver.base}${path}` }),
          });
          if (response.status !== 201)
            throw new Error(`registering ${path}: ${response.status} ${await response.text()}`);
          const endpoint = (await response.json()) as { webhook_endpoint_id: string };
          tenant.endpoints.push({ id: endpoint.webhook_endpoint_id, path });
        }
      const firstMs = await firstDelivery(service, tenants[0], receiver);
      const peak = await deliveryDelays(service, knex, tenants, receiver);
      await sleep(1000);
      const half = shape.halfRate
        ? await deliveryDelays(service, knex, tenants, receiver, peak.rate / 2)
        : undefined;
      const drain = await drainBacklog(service, knex, tenants, receiver, shape);
      return { without, createCpuUs, firstMs, peak, half, drain };
    });
  } finally {
    await service?.stop();
    await database.drop();
  }
}

async function webhooksBench(): Promise<void> {
  const receiver = await startReceiver();
  try {
    console.log('\n## MariaDB: webhooks (local receivers answering 204 at once)\n');
    const results = [];
    for (const shape of shapes.filter(({ name }) => chosen(name)))
      results.push({ shape, ...(await runShape(shape, receiver)) });
    console.log(
      `${connections} writers. Deliveries are wanted at the creates' rate times the endpoints each event goes to; ` +
        'the delay runs from the 2xx of the create to the delivery reaching its endpoint. ' +
        `The receiver's thread runs at nice ${receiver.nice}, as a receiver on a machine of its own would not wait behind the bench's writers and MariaDB.\n`,
    );
    console.log(
      '| endpoints | creates/s without endpoints → at the peak | deliveries/s, first to last (≥ wanted) | of those, while writing | last delivery after the writers stopped (< 2 s) | delay p50 | its first second → last | p99 (< 1 s) | sent twice |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const { shape, without, peak, half } of results)
      for (const [name, run] of [
        [shape.name, peak],
        ...(half ? [[`${shape.name}, half the peak rate`, half] as const] : []),
      ] as const)
        console.log(
          `| ${name} | ${fmt(without)} → ${fmt(run.rate)} | ${fmt(run.deliveredRate)} of ${fmt(run.wanted)} ${mark(run.deliveredRate >= 0.98 * run.wanted)} | ${fmt(run.deliveredWhileWriting)} | ` +
            `${run.lastAfterMs === Infinity ? '**never (30 s)**' : `${fmt(run.lastAfterMs)} ms`} ${mark(run.lastAfterMs < 2000)} | ` +
            `${fmt(run.p50, 1)} ms | ${fmt(run.p50FirstSecond)} → ${fmt(run.p50LastSecond)} ms | ${fmt(run.p99, 1)} ms ${mark(run.p99 < 1000)} | ${run.twice} ${mark(run.twice === 0)} |`,
        );
    console.log(
      '\n| endpoints | from a backlog: deliveries/s | against the creates/s without endpoints (≥ 4) | least/most share, first half | statements per delivery | service CPU per delivery | per create | ratio (≤ 0.3) |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const { shape, without, createCpuUs, drain } of results)
      console.log(
        `| ${shape.name} | ${fmt(drain.perSecond)} of ${drain.planned}${drain.drained ? '' : ' (**not all within 120 s**)'} | ${fmt(drain.perSecond / without, 1)} ${mark(drain.drained && drain.perSecond >= 4 * without)} | ` +
          `${fmt(drain.fairness, 2)} | ${fmt(drain.statementsEach, 2)} | ${fmt(drain.cpuUs)} µs | ${fmt(createCpuUs)} µs | ${fmt(drain.cpuUs / createCpuUs, 2)} ${mark(drain.cpuUs / createCpuUs <= 0.3)} |`,
      );
    console.log(
      `\nThe first delivery after the endpoints are registered (the delivery thread starts then), from the create's 2xx: ${results
        .map(({ shape, firstMs }) => `${shape.name} ${fmt(firstMs)} ms`)
        .join(', ')}.`,
    );
    if (process.env.BENCH_CPU_PROF)
      for (const { shape, peak, drain } of results)
        console.log(
          `\nIn the CPU profiles (µs of CLOCK_MONOTONIC), ${shape.name}: the writers at the peak ${peak.profileWindow}, ${peak.delivered} deliveries meanwhile; the drain ${drain.profileWindow}, ${drain.delivered} deliveries.`,
        );
  } finally {
    await receiver.stop();
  }
}

webhooksBench().catch((error) => {
  console.error(error);
  process.exit(1);
});
