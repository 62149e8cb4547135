/**
 * Bulk changes on MariaDB/MySQL, where calls can be held open for real (issue 46, item 4): with
 * a table locked by a connection of the test's own, two calls of a tenant wait inside the
 * database holding their places, and a third is 429 at once, as is a call past the instance's
 * cap; and a bulk change of 1,000 tasks whose connection is killed while its COMMIT waits leaves
 * every task, label and the feed as they were (a 503), and runs whole when asked again.
 */
import mysql from 'mysql2/promise';
import type { components } from '../../generated/api';
import { startTestService, type TestService } from '../support/test-service';

type Task = components['schemas']['Task'];

const newest = '2026-12-15';
let api: TestService;
/** Connections of the test's own to the service's database: one locks tables, one looks. */
let locker: mysql.Connection;
let own: mysql.Connection;

beforeAll(async () => {
  api = await startTestService({
    // A call waits on a table lock of the test's for as long as the test holds it.
    config: { statementTimeoutSeconds: 60, bulkChangesPerInstance: 3 },
  });
  const { host, port, user, database } = api.service.knex.client.config.connection as {
    host: string;
    port: number;
    user: string;
    database: string;
  };
  own = await mysql.createConnection({ host, port, user, database });
  locker = await mysql.createConnection({ host, port, user, database });
});
afterAll(async () => {
  await own.end();
  await locker.end();
  await api.stop();
});

const call = (key: string, method: string, path: string, body?: unknown) =>
  api.send(method, path, {
    key,
    headers: {
      'Api-Version': newest,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function tenantWithTasks(name: string, count: number) {
  const key = await api.createKey(name);
  const projectId = (await call(key, 'POST', '/v1/projects', { name })).json.project_id;
  const tasks: Task[] = [];
  for (let start = 0; start < count; start += 25) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(25, count - start) }, (_, i) =>
        call(key, 'POST', '/v1/tasks', {
          project_id: projectId,
          title: `task ${start + i}`,
          labels: ['ops'],
        }),
      ),
    );
    tasks.push(...batch.map((answer) => answer.json as Task));
  }
  const { tenant_id: tenantId } = await api.service
    .knex('tenants')
    .first('tenant_id')
    .where('name', name);
  return { key, projectId, tenantId: tenantId as string, taskIds: tasks.map((t) => t.task_id) };
}

/** Waits until the test's own reads see what `ready` asks for. */
async function until(ready: () => Promise<boolean>, what: string) {
  for (let tries = 0; tries < 600; tries++) {
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`never: ${what}`);
}

/** How many of the tenant's places are held now, as every instance counts them. */
async function placesHeld(tenantId: string): Promise<number> {
  const [rows] = await own.query(
    'select count(*) as held from leases where name like ? and expires_at > utc_timestamp(3)',
    [`bulk:${tenantId}:%`],
  );
  return Number((rows as Array<{ held: number }>)[0].held);
}

it('refuses a third bulk change of a tenant, and one past the instance cap, while others really run', async () => {
  const [a, b, c] = await Promise.all(
    ['held-a', 'held-b', 'held-c'].map((name) => tenantWithTasks(name, 2)),
  );
  const update = (tenant: typeof a) =>
    call(tenant.key, 'POST', '/v1/tasks/bulk-update', {
      task_ids: tenant.taskIds,
      changes: { status: 'done' },
    });
  // Every read or write of tasks waits for the test's lock: the calls below stop there, inside
  // the database, holding their places.
  await locker.query('LOCK TABLES tasks WRITE');
  const running: Array<ReturnType<typeof update>> = [];
  try {
    running.push(update(a), update(a));
    await until(async () => (await placesHeld(a.tenantId)) === 2, 'two calls of a hold places');
    const third = await update(a);
    expect(third.status).toBe(429);
    expect(third.json).toMatchObject({ type: '/problems/rate-limited', status: 429 });
    expect(third.json.detail).toMatch(/tenant is running 2 bulk changes/);
    expect(third.headers.get('retry-after')).toBe('1');

    // Another tenant has places of its own, until the instance runs its 3.
    running.push(update(b));
    await until(async () => (await placesHeld(b.tenantId)) === 1, 'b holds a place');
    const pastCap = await update(c);
    expect(pastCap.status).toBe(429);
    expect(pastCap.json.detail).toMatch(/instance is running 3 bulk changes/);
    expect(await placesHeld(c.tenantId)).toBe(0);
  } finally {
    await locker.query('UNLOCK TABLES');
  }
  const answers = await Promise.all(running);
  expect(answers.map((answer) => [answer.status, answer.json.matched])).toEqual([
    [200, 2],
    [200, 2],
    [200, 2],
  ]);
  // One of a's two changed the tasks; the other found them done already.
  expect(
    answers
      .slice(0, 2)
      .map((answer) => answer.json.changed)
      .sort(),
  ).toEqual([0, 2]);
  // Their places are given back: every tenant runs again.
  for (const tenant of [a, c]) expect((await update(tenant)).status).toBe(200);
  expect(await placesHeld(a.tenantId)).toBe(0);
}, 60_000);

it('leaves every task and the feed as they were when its connection is killed mid-way, and runs whole when asked again', async () => {
  const tenant = await tenantWithTasks('killed', 1000);
  const snapshot = async () => ({
    tasks: await api.service.knex('tasks').where('project_id', tenant.projectId).orderBy('task_id'),
    labels: await api.service
      .knex('task_labels')
      .whereIn('task_id', tenant.taskIds)
      .orderBy(['task_id', 'label_fold']),
    events: await api.service
      .knex('events')
      .where('tenant_id', tenant.tenantId)
      .orderBy('event_id')
      .select('event_id', 'sequence'),
  });
  await until(
    async () => (await snapshot()).events.every((event) => Number(event.sequence) > 0),
    'the creations are numbered',
  );
  const before = await snapshot();
  const feedBefore = await call(tenant.key, 'GET', '/v1/events?from=latest');
  const body = {
    task_ids: tenant.taskIds,
    changes: { status: 'done', labels_add: ['shipped'], labels_remove: ['ops'] },
  };

  // The call's statements go to the database with its COMMIT, in one packet: with `events`
  // locked, its updates of the tasks have run when it stops at the first insert of an event.
  await locker.query('LOCK TABLES events WRITE');
  let killed: ReturnType<typeof call> | undefined;
  try {
    killed = call(tenant.key, 'POST', '/v1/tasks/bulk-update', body);
    let connectionId: number | undefined;
    await until(async () => {
      const [rows] = await own.query(
        "select id, info from information_schema.processlist where info like 'insert into `events`%'",
      );
      connectionId = (rows as Array<{ id: number }>)[0]?.id;
      return connectionId !== undefined;
    }, 'the bulk change waits to write its events');
    // Mid-way indeed: its updates have run, uncommitted (a dirty read sees them).
    await own.query('SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED');
    const [dirty] = await own.query(
      "select count(*) as n from tasks where project_id = ? and status = 'done'",
      [tenant.projectId],
    );
    await own.query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    expect(Number((dirty as Array<{ n: number }>)[0].n)).toBe(1000);
    await own.query(`KILL CONNECTION ${Number(connectionId)}`);
  } finally {
    await locker.query('UNLOCK TABLES');
  }
  const answer = await killed!;
  expect(answer.status).toBe(503);
  expect(answer.json.type).toBe('/problems/service-unavailable');

  expect(await snapshot()).toEqual(before);
  const feedAfter = await call(tenant.key, 'GET', '/v1/events?from=latest');
  expect(feedAfter.json.next_cursor).toBe(feedBefore.json.next_cursor);
  expect(
    (await call(tenant.key, 'GET', `/v1/events?cursor=${feedBefore.json.next_cursor}`)).json.data,
  ).toEqual([]);

  // Asked again, it runs whole.
  const started = Date.now();
  const again = await call(tenant.key, 'POST', '/v1/tasks/bulk-update', body);
  const took = Date.now() - started;
  expect([again.status, again.json.matched, again.json.changed]).toEqual([200, 1000, 1000]);
  expect(took).toBeLessThan(10_000);
  const after = await snapshot();
  expect(after.tasks.every((row) => row.status === 'done')).toBe(true);
  expect(after.labels.map((row) => row.label_fold)).toEqual(Array(1000).fill('shipped'));
  expect(after.events.length).toBe(before.events.length + 1000);
}, 180_000);
