/**
 * POST /v1/tasks/bulk-update and bulk-delete, version 2026-12-15 (issue 46, item 4;
 * contract-decisions "Planning with tasks", "Bulk changes"): every kind of change, by ids and by a
 * filter, all or nothing (a foreign id is a 404 and nothing changes), a task already as asked
 * matched but not changed, one event per changed task carrying the request's id, dry runs that
 * change and record nothing, more than 1,000 tasks a 422 saying how many, a title a 400 naming
 * /changes/title, Idempotency-Key replays, the tenant's 2 places (a third is 429, the places
 * counted in the database as every instance sees them), one request per 100 tasks against the
 * key's limit, and no bulk operation in 2026-11-28. Every answer is checked against the document.
 * test/api/bulk-changes.mysql.test.ts holds calls open and kills one mid-way on MariaDB.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import type { components } from '../../generated/api';
import { startTestService, type TestService } from '../support/test-service';

type Task = components['schemas']['Task'];
type Event = components['schemas']['Event'];

const newest = '2026-12-15';
let api: TestService;
let key: string;
let projectId: string;

async function call(
  method: string,
  path: string,
  body?: unknown,
  options: { key?: string; version?: string; headers?: Record<string, string> } = {},
) {
  return api.send(method, path, {
    key: options.key ?? key,
    headers: {
      'Api-Version': options.version ?? newest,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...options.headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const bulkUpdate = (body: object, options?: Parameters<typeof call>[3]) =>
  call('POST', '/v1/tasks/bulk-update', body, options);
const bulkDelete = (body: object, options?: Parameters<typeof call>[3]) =>
  call('POST', '/v1/tasks/bulk-delete', body, options);

async function createTasks(count: number, fields: object = {}, project = projectId, as = key) {
  const made: Task[] = [];
  for (let start = 0; start < count; start += 20) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(20, count - start) }, (_, i) =>
        call(
          'POST',
          '/v1/tasks',
          { project_id: project, title: `task ${start + i}`, ...fields },
          {
            key: as,
          },
        ),
      ),
    );
    for (const answer of batch) {
      expect(answer.status).toBe(201);
      made.push(answer.json);
    }
  }
  return made.sort((a, b) => (a.task_id < b.task_id ? -1 : 1));
}

const read = async (taskId: string): Promise<Task> =>
  (await call('GET', `/v1/tasks/${taskId}`)).json;
const readAll = (tasks: Task[]) => Promise.all(tasks.map((task) => read(task.task_id)));
const ids = (tasks: Task[]) => tasks.map((task) => task.task_id);

/** A point in the feed: a cursor, and a project made once every change before it had committed. */
interface FeedPoint {
  cursor: string;
  marker: string;
}

const marker = async (): Promise<string> =>
  (await call('POST', '/v1/projects', { name: 'marker' })).json.project_id;

/**
 * The feed now: events are numbered in the order their changes committed, so those of changes
 * made before the marker come before its event, however late they are numbered.
 */
const feedHead = async (): Promise<FeedPoint> => ({
  cursor: (await call('GET', '/v1/events?from=latest')).json.next_cursor,
  marker: await marker(),
});

/** Every event recorded after the point and before a marker made now: nothing else was recorded meanwhile. */
async function eventsSince(point: FeedPoint): Promise<Event[]> {
  const end = await marker();
  const events: Event[] = [];
  let started = false;
  let cursor = point.cursor;
  for (let tries = 0; tries < 100; tries++) {
    const page = await call(
      'GET',
      `/v1/events?cursor=${encodeURIComponent(cursor)}&limit=200&wait=1`,
    );
    expect(page.status).toBe(200);
    for (const event of page.json.data as Event[]) {
      const made = event.type === 'project.created' ? event.project_id : undefined;
      if (made === end) return events;
      if (started) events.push(event);
      if (made === point.marker) started = true;
    }
    cursor = page.json.next_cursor;
  }
  throw new Error('the marker never reached the feed');
}

beforeAll(async () => {
  api = await startTestService();
  key = await api.createKey('bulk');
  projectId = (await call('POST', '/v1/projects', { name: 'bulk' })).json.project_id;
});
afterAll(() => api.stop());

it('changes each field of every task named, status by the rules of PATCH, with one event each carrying the request id', async () => {
  const tasks = await createTasks(3, { labels: ['Ops', 'web'], priority: 'low' });
  const [first] = tasks;
  await call('PATCH', `/v1/tasks/${first.task_id}`, { status: 'done' });
  const closedAt = (await read(first.task_id)).completed_at;
  const from = await feedHead();

  const answer = await bulkUpdate(
    {
      task_ids: [...ids(tasks), first.task_id],
      changes: {
        status: 'cancelled',
        priority: 'urgent',
        due_on: '2026-12-24',
        assignee: 'ana@example.com',
        labels_add: ['OPS', 'Launch'],
        labels_remove: ['WEB'],
      },
    },
    { headers: { 'X-Request-Id': 'bulk-every-field' } },
  );
  expect(answer.status).toBe(200);
  expect(answer.json).toEqual({ matched: 3, changed: 3, task_ids: ids(tasks), dry_run: false });

  const after = await readAll(tasks);
  for (const task of after)
    expect(task).toMatchObject({
      status: 'cancelled',
      priority: 'urgent',
      due_on: '2026-12-24',
      assignee: 'ana@example.com',
      // `Ops` keeps its first spelling; `web` is gone, `Launch` new, sorted by fold.
      labels: ['Launch', 'Ops'],
    });
  // Done to cancelled keeps completed_at; pending to cancelled sets it to the update's time.
  expect(after[0].completed_at).toBe(closedAt);
  for (const task of after.slice(1)) expect(task.completed_at).toBe(task.updated_at);
  const folds = await api.service
    .knex('task_labels')
    .whereIn('task_id', ids(tasks))
    .select('task_id', 'label_fold')
    .orderBy(['task_id', 'label_fold']);
  expect(folds).toEqual(
    ids(tasks).flatMap((id) => [
      { task_id: id, label_fold: 'launch' },
      { task_id: id, label_fold: 'ops' },
    ]),
  );

  const events = await eventsSince(from);
  expect(
    events.map((event) => [event.type, (event.data.object as Task).task_id, event.request_id]),
  ).toEqual(ids(tasks).map((id) => ['task.updated', id, 'bulk-every-field']));
  expect(events[0].data.object).toEqual(after[0]);
  expect(events[0].data.previous).toEqual({
    status: 'done',
    updated_at: expect.any(String),
    priority: 'low',
    due_on: null,
    assignee: null,
    labels: ['Ops', 'web'],
  });
  expect(events[1].data.previous).toMatchObject({ status: 'pending', completed_at: null });
});

it('matches a task already as asked without changing it: no write, no event, its ETag kept', async () => {
  const [asked, other] = await createTasks(2, { priority: 'high', labels: ['ops'] });
  const before = await call('GET', `/v1/tasks/${asked.task_id}`);
  const from = await feedHead();
  const answer = await bulkUpdate({
    task_ids: [asked.task_id, other.task_id],
    changes: { priority: 'high', labels_add: ['OPS'], labels_remove: ['absent'] },
  });
  expect(answer.json).toEqual({ matched: 2, changed: 0, task_ids: [], dry_run: false });
  const again = await call('GET', `/v1/tasks/${asked.task_id}`);
  expect([again.json, again.headers.get('etag')]).toEqual([
    before.json,
    before.headers.get('etag'),
  ]);
  expect(await eventsSince(from)).toEqual([]);

  // Reopened, a task loses completed_at; one already open is matched only.
  await call('PATCH', `/v1/tasks/${asked.task_id}`, { status: 'done' });
  const reopened = await bulkUpdate({
    task_ids: ids([asked, other]),
    changes: { status: 'pending' },
  });
  expect(reopened.json).toMatchObject({ matched: 2, changed: 1, task_ids: [asked.task_id] });
  expect(await read(asked.task_id)).toMatchObject({ status: 'pending', completed_at: null });
});

it('changes nothing and records nothing in a dry run, and says what would change', async () => {
  const tasks = await createTasks(3);
  await call('PATCH', `/v1/tasks/${tasks[1].task_id}`, { assignee: 'ben' });
  const before = await readAll(tasks);
  const from = await feedHead();
  const update = await bulkUpdate({
    task_ids: ids(tasks),
    changes: { assignee: 'ben' },
    dry_run: true,
  });
  expect(update.json).toEqual({
    matched: 3,
    changed: 2,
    task_ids: [tasks[0].task_id, tasks[2].task_id],
    dry_run: true,
  });
  const remove = await bulkDelete({ task_ids: ids(tasks), dry_run: true });
  expect(remove.json).toEqual({ matched: 3, changed: 3, task_ids: ids(tasks), dry_run: true });
  expect(await readAll(tasks)).toEqual(before);
  expect(await eventsSince(from)).toEqual([]);
});

it('deletes every task named with its own event, the task as it was', async () => {
  const tasks = await createTasks(3, { labels: ['gone'] });
  const from = await feedHead();
  const answer = await bulkDelete(
    { task_ids: ids(tasks) },
    { headers: { 'X-Request-Id': 'bulk-delete' } },
  );
  expect(answer.json).toEqual({ matched: 3, changed: 3, task_ids: ids(tasks), dry_run: false });
  for (const task of tasks)
    expect((await call('GET', `/v1/tasks/${task.task_id}`)).status).toBe(404);
  expect(await api.service.knex('task_labels').whereIn('task_id', ids(tasks))).toEqual([]);
  const events = await eventsSince(from);
  expect(events.map((event) => [event.type, event.request_id, event.data])).toEqual(
    tasks.map((task) => ['task.deleted', 'bulk-delete', { object: task }]),
  );
});

it("refuses a task that is not the tenant's with a 404 naming it, and changes nothing", async () => {
  const tasks = await createTasks(2);
  const otherKey = await api.createKey('bulk-other');
  const otherProject = (await call('POST', '/v1/projects', { name: 'theirs' }, { key: otherKey }))
    .json.project_id;
  const [foreign] = await createTasks(1, {}, otherProject, otherKey);
  const from = await feedHead();
  for (const answer of [
    await bulkUpdate({ task_ids: [...ids(tasks), foreign.task_id], changes: { status: 'done' } }),
    await bulkDelete({ task_ids: [tasks[0].task_id, foreign.task_id] }),
  ]) {
    expect(answer.status).toBe(404);
    expect(answer.json).toMatchObject({
      type: '/problems/not-found',
      detail: `No task ${foreign.task_id} exists.`,
    });
  }
  expect(await readAll(tasks)).toEqual(tasks);
  expect(
    (await call('GET', `/v1/tasks/${foreign.task_id}`, undefined, { key: otherKey })).json,
  ).toEqual(foreign);
  expect(await eventsSince(from)).toEqual([]);
});

it('changes and deletes the tasks a filter matches, and refuses a filter of the wrong shape where it is wrong', async () => {
  const other = (await call('POST', '/v1/projects', { name: 'filtered' })).json.project_id;
  const urgent = await createTasks(3, { labels: ['launch'], priority: 'urgent' }, other);
  const calm = await createTasks(2, { labels: ['launch'], priority: 'low' }, other);
  const filter = {
    all: [
      { project_id: { in: [other] } },
      { priority: { gte: 'high' } },
      { labels: { has: 'LAUNCH' } },
    ],
  };
  const dry = await bulkUpdate({ filter, changes: { status: 'in_progress' }, dry_run: true });
  expect(dry.json).toEqual({ matched: 3, changed: 3, task_ids: ids(urgent), dry_run: true });
  const changed = await bulkUpdate({ filter, changes: { status: 'in_progress' } });
  expect(changed.json).toEqual({ matched: 3, changed: 3, task_ids: ids(urgent), dry_run: false });
  expect((await readAll(urgent)).map((task) => task.status)).toEqual([
    'in_progress',
    'in_progress',
    'in_progress',
  ]);
  expect(await readAll(calm)).toEqual(calm);

  const deleted = await bulkDelete({ filter: { project_id: { in: [other] } } });
  expect(deleted.json).toMatchObject({ matched: 5, changed: 5 });
  expect((await call('GET', `/v1/projects/${other}/tasks`)).json.data).toEqual([]);
  const none = await bulkDelete({ filter: { project_id: { in: [other] } } });
  expect(none.json).toEqual({ matched: 0, changed: 0, task_ids: [], dry_run: false });

  const bad = await bulkUpdate({
    filter: {
      all: [{ status: { in: ['done'] } }, { priority: { gte: 'low' } }, { labels: { has: ' x' } }],
    },
    changes: { status: 'done' },
  });
  expect(bad.status).toBe(400);
  expect(bad.json.errors.map((e: { pointer: string }) => e.pointer)).toEqual([
    '/filter/all/2/labels/has',
  ]);
  const both = await bulkDelete({
    filter: { status: { in: ['done'] } },
    task_ids: [urgent[0].task_id],
  });
  expect([both.status, both.json.errors[0].pointer]).toEqual([400, '/filter']);
  const neither = await bulkDelete({});
  expect([neither.status, neither.json.errors[0].pointer]).toEqual([400, '/task_ids']);
});

it('refuses title and description, labels both added and taken off, and an empty change with a 400 naming the place', async () => {
  const [task] = await createTasks(1);
  const cases: Array<[object, string]> = [
    [{ title: 'new' }, '/changes/title'],
    [{ description: 'new' }, '/changes/description'],
    [{ labels: ['x'] }, '/changes/labels'],
    [{ labels_add: ['Ops'], labels_remove: ['x', 'OPS'] }, '/changes/labels_remove/1'],
    [{}, '/changes'],
  ];
  for (const [changes, pointer] of cases) {
    const answer = await bulkUpdate({ task_ids: [task.task_id], changes });
    expect([pointer, answer.status, answer.json.type]).toEqual([
      pointer,
      400,
      '/problems/invalid-request',
    ]);
    expect(answer.json.errors.map((e: { pointer: string }) => e.pointer)).toEqual([pointer]);
  }
  const title = await bulkUpdate({ task_ids: [task.task_id], changes: { title: 'new' } });
  expect(title.json.errors[0].message).toMatch(/not a bulk change/);
  expect(await read(task.task_id)).toEqual(task);
});

it("answers with each of bulk-delete's documented 400 and 422 examples to a request of its own, not bulk-update's", async () => {
  const document = YAML.parse(
    fs.readFileSync(path.join(__dirname, '../../openapi/openapi.yaml'), 'utf8'),
  );
  /** The response's examples by name, its $ref followed. */
  const examplesOf = (response: { $ref?: string }): Record<string, { value: object }> =>
    (response.$ref ? document.components.responses[response.$ref.split('/').at(-1)!] : response)
      .content['application/problem+json'].examples;
  const responses = document.paths['/v1/tasks/bulk-delete'].post.responses;
  const [task] = await createTasks(1);
  const madeUp = (count: number) =>
    Array.from(
      { length: count },
      (_, i) => `0193a5b3-0000-7000-8000-${String(i).padStart(12, '0')}`,
    );
  await bulkDelete(
    { task_ids: [task.task_id], dry_run: true },
    { headers: { 'Idempotency-Key': 'delete-reused' } },
  );
  /** The request each example answers. */
  const requests: Record<string, () => ReturnType<typeof call>> = {
    changesNotTaken: () => bulkDelete({ task_ids: [task.task_id], changes: { status: 'done' } }),
    noTasksNamed: () => bulkDelete({ dry_run: true }),
    bothNamed: () =>
      bulkDelete({ task_ids: [task.task_id], filter: { status: { in: ['cancelled'] } } }),
    badFilter: () =>
      bulkDelete({
        filter: {
          all: [
            { project_id: { in: [projectId] } },
            { status: { in: ['cancelled'] } },
            { labels: { has: ' old' } },
          ],
        },
      }),
    malformedJson: () =>
      api.send('POST', '/v1/tasks/bulk-delete', {
        key,
        headers: { 'Api-Version': newest, 'Content-Type': 'application/json' },
        body: '{"task_ids": [',
      }),
    tooManyTasks: () => bulkDelete({ task_ids: madeUp(1204) }),
    idempotencyKeyReused: () =>
      bulkDelete({ task_ids: [task.task_id] }, { headers: { 'Idempotency-Key': 'delete-reused' } }),
  };
  const answered: Array<[string, number, unknown]> = [];
  const documented: Array<[string, number, unknown]> = [];
  for (const status of [400, 422]) {
    for (const [name, example] of Object.entries(examplesOf(responses[String(status)]))) {
      documented.push([name, status, example.value]);
      const answer = await requests[name]?.();
      const { request_id: _id, ...problem } = answer?.json ?? {};
      answered.push([name, answer?.status ?? 0, answer ? problem : 'no such request']);
    }
  }
  expect(answered).toEqual(documented);
  expect(documented.map(([name]) => name).sort()).toEqual(Object.keys(requests).sort());
  expect(await read(task.task_id)).toEqual(task);
});

it('refuses more than 1,000 tasks with a 422 saying how many, by ids and by a filter, changing nothing', async () => {
  const many = Array.from(
    { length: 1001 },
    (_, i) => `0193a5b3-0000-7000-8000-${String(i).padStart(12, '0')}`,
  );
  const named = await bulkUpdate({ task_ids: [...many, many[0]], changes: { status: 'done' } });
  expect(named.status).toBe(422);
  expect(named.json).toMatchObject({
    type: '/problems/too-many-tasks',
    limit: 1000,
    matched: 1001,
  });
  expect(named.json.detail).toMatch(/1001 tasks/);

  const crowded = (await call('POST', '/v1/projects', { name: 'crowded' })).json.project_id;
  const tasks = await createTasks(1001, {}, crowded);
  const from = await feedHead();
  const filter = { project_id: { in: [crowded] } };
  const matched = await bulkDelete({ filter });
  expect(matched.status).toBe(422);
  expect(matched.json).toMatchObject({ type: '/problems/too-many-tasks', matched: 1001 });
  // One fewer fits: 1,000 changed in one call, with 1,000 events.
  await call('PATCH', `/v1/tasks/${tasks[1000].task_id}`, { labels: ['left'] });
  const started = Date.now();
  const changed = await bulkUpdate({
    filter: { all: [filter, { not: { labels: { has: 'left' } } }] },
    changes: { labels_add: ['x'], priority: 'medium' },
  });
  const took = Date.now() - started;
  expect(changed.json).toEqual({
    matched: 1000,
    changed: 1000,
    task_ids: ids(tasks).slice(0, 100),
    dry_run: false,
  });
  expect(took).toBeLessThan(10_000);
  const events = await eventsSince(from);
  const updates = events.filter(
    (event) => event.request_id === changed.headers.get('x-request-id'),
  );
  expect(updates.map((event) => (event.data.object as Task).task_id)).toEqual(
    ids(tasks).slice(0, 1000),
  );
  expect(new Set(updates.map((event) => (event.data.object as Task).priority))).toEqual(
    new Set(['medium']),
  );
}, 120_000);

it('replays an answer for its Idempotency-Key, changing nothing again, and refuses the key with another body', async () => {
  const tasks = await createTasks(2);
  const headers = { 'Idempotency-Key': 'bulk-replay' };
  const body = { task_ids: ids(tasks), changes: { status: 'in_progress' } };
  const first = await bulkUpdate(body, { headers });
  expect(first.status).toBe(200);
  await call('PATCH', `/v1/tasks/${tasks[0].task_id}`, { status: 'pending' });
  const from = await feedHead();
  const replay = await bulkUpdate(body, { headers });
  expect([replay.status, replay.json, replay.headers.get('idempotent-replayed')]).toEqual([
    200,
    first.json,
    'true',
  ]);
  expect((await read(tasks[0].task_id)).status).toBe('pending');
  expect(await eventsSince(from)).toEqual([]);
  const other = await bulkDelete({ task_ids: ids(tasks) }, { headers });
  expect([other.status, other.json.type]).toEqual([422, '/problems/idempotency-key-reused']);
  expect((await bulkUpdate(body, { headers, version: '2026-11-28' })).status).toBe(405);
});

it('refuses a third bulk change of a tenant while two hold its places, on whichever instance they run', async () => {
  const tasks = await createTasks(1);
  const { tenant_id: tenantId } = await api.service
    .knex('tenants')
    .first('tenant_id')
    .where('name', 'bulk');
  // Two calls of another instance, as every instance sees them: the tenant's places are rows of
  // the shared database.
  const held = [1, 2].map((place) => ({
    name: `bulk:${tenantId}:${place}`,
    holder: `another-instance-${place}`,
    expires_at: '2999-01-01 00:00:00.000',
  }));
  await api.service.knex('leases').insert(held).onConflict('name').merge();
  try {
    for (const answer of [
      await bulkUpdate({ task_ids: ids(tasks), changes: { status: 'done' } }),
      await bulkDelete({ task_ids: ids(tasks) }),
    ]) {
      expect(answer.status).toBe(429);
      expect(answer.json.type).toBe('/problems/rate-limited');
      expect(answer.json.detail).toMatch(/running 2 bulk changes/);
      expect(answer.headers.get('retry-after')).toBe('1');
    }
    expect(await read(tasks[0].task_id)).toEqual(tasks[0]);
    // Another tenant's places are its own.
    const otherKey = await api.createKey('bulk-places');
    const free = await bulkDelete({ task_ids: [tasks[0].task_id] }, { key: otherKey });
    expect(free.status).toBe(404);
  } finally {
    // One call ends: its place is free again.
    await api.service
      .knex('leases')
      .where('name', held[0].name)
      .update({ expires_at: '2000-01-01 00:00:00.000' });
  }
  const runs = await bulkUpdate({ task_ids: ids(tasks), changes: { status: 'done' } });
  expect(runs.status).toBe(200);
  // A call gives its place back when it has answered: more calls run one after another.
  for (let i = 0; i < 3; i++)
    expect(
      (await bulkUpdate({ task_ids: ids(tasks), changes: { status: 'pending' } })).status,
    ).toBe(200);
});

it('has no bulk operations in 2026-11-28: its document has none, and a call is answered as its routing answers it', async () => {
  const older = YAML.parse(
    fs.readFileSync(path.join(__dirname, '../../openapi/versions/2026-11-28.yaml'), 'utf8'),
  );
  expect(Object.keys(older.paths).filter((p) => p.includes('bulk'))).toEqual([]);
  expect(Object.keys(older.components.schemas).filter((s) => s.includes('Bulk'))).toEqual([]);
  expect(older.components.schemas.Problem.properties.matched).toBeUndefined();
  const [task] = await createTasks(1);
  for (const operation of ['bulk-update', 'bulk-delete']) {
    const answer = await call(
      'POST',
      `/v1/tasks/${operation}`,
      { task_ids: [task.task_id], changes: { status: 'done' } },
      { version: '2026-11-28' },
    );
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')?.split(', ').sort()).toEqual(['DELETE', 'GET', 'PATCH']);
    expect(answer.headers.get('api-version')).toBe('2026-11-28');
  }
  expect(await read(task.task_id)).toEqual(task);
});

describe('against the key’s rate limit', () => {
  let limited: TestService;
  beforeAll(async () => {
    limited = await startTestService({ config: { rateLimitPerMinute: 12 } });
  });
  afterAll(() => limited.stop());

  it('counts a bulk change as one request per 100 tasks', async () => {
    const limitedKey = await limited.createKey('counted');
    const send = (count: number) =>
      limited.send('POST', '/v1/tasks/bulk-delete', {
        key: limitedKey,
        headers: { 'Content-Type': 'application/json', 'Api-Version': newest },
        body: JSON.stringify({
          task_ids: Array.from(
            { length: count },
            (_, i) => `0193a5b3-0000-7000-8000-${String(i).padStart(12, '0')}`,
          ),
          dry_run: true,
        }),
      });
    // 1,000 tasks count as 10 of the 12: the first answers (no such task), and 3 more need 3.
    const counted = await send(1000);
    expect(counted.status).toBe(404);
    // Its own RateLimit header says what it took: 2 left, not the 11 of one request.
    expect(counted.headers.get('ratelimit')).toMatch(/^"12-in-1min"; r=2; t=\d+$/);
    const refused = await send(300);
    expect(refused.status).toBe(429);
    expect(refused.json.detail).toMatch(/a bulk change of 300 tasks counts as 3/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('ratelimit')).toMatch(/^"12-in-1min"; r=0; t=\d+$/);
    // A call of 100 tasks or fewer is one request, and its header says so.
    const other = await limited.createKey('counted-one');
    const one = await limited.send('POST', '/v1/tasks/bulk-delete', {
      key: other,
      headers: { 'Content-Type': 'application/json', 'Api-Version': newest },
      body: JSON.stringify({ task_ids: ['0193a5b3-0000-7000-8000-000000000001'], dry_run: true }),
    });
    expect([one.status, one.headers.get('ratelimit')]).toEqual([
      404,
      expect.stringMatching(/^"12-in-1min"; r=11; t=\d+$/),
    ]);
  });
});
