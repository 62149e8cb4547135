/**
 * Webhook subscriptions, version 2026-12-15 (issue 46, item 5; contract-decisions "Planning with
 * tasks"): an endpoint's `filter` (a task event is sent when its task matches before or after the
 * change) and `fields` (a `task.updated` is sent only when one of them changed), deliveries to a
 * real receiver; project events ignore both. Bad filters and fields are 400s with pointers that
 * store nothing; 2026-11-28 neither shows nor takes them.
 */
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { startTestService, type TestService } from '../support/test-service';

const [newest, older] = ['2026-12-15', '2026-11-28'];
let api: TestService;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [api, receiver] = await Promise.all([
    startTestService({
      config: {
        webhookAllowPrivateTargets: true,
        webhookTimeoutSeconds: 1,
        webhookRetryScheduleMs: [300],
      },
    }),
    startReceiver(),
  ]);
});
afterAll(async () => {
  await api.stop();
  await receiver.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let tenants = 0;
const newKey = () => api.createKey(`subscriptions-${++tenants}`);

async function call(key: string, method: string, path: string, body?: unknown, version = newest) {
  const headers: Record<string, string> = { 'Api-Version': version };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  return api.send(method, path, {
    key,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** An endpoint at `path` on the receiver, with `extra` (filter, fields…) on its registration. */
async function register(key: string, path: string, extra: object = {}) {
  const created = await call(key, 'POST', '/v1/webhook-endpoints', {
    url: receiver.origin + path,
    ...extra,
  });
  expect([created.status, created.status === 201 ? '' : created.text]).toEqual([201, '']);
  return created.json.webhook_endpoint_id as string;
}

async function ok(answer: Promise<{ status: number; text: string; json: any }>, status = 200) {
  const { status: got, text, json } = await answer;
  expect([got, got === status ? '' : text]).toEqual([status, '']);
  return json;
}

const newProject = async (key: string) =>
  (await ok(call(key, 'POST', '/v1/projects', { name: 'subscribed' }), 201)).project_id as string;
const newTask = async (key: string, projectId: string, fields: object = {}) =>
  (
    await ok(
      call(key, 'POST', '/v1/tasks', { project_id: projectId, title: 'task', ...fields }),
      201,
    )
  ).task_id as string;
const patchTask = (key: string, taskId: string, changes: object) =>
  ok(call(key, 'PATCH', `/v1/tasks/${taskId}`, changes));
const deleteTask = (key: string, taskId: string) =>
  ok(call(key, 'DELETE', `/v1/tasks/${taskId}`), 204);

interface Sent {
  type: string;
  taskId?: string;
  previous: string[];
}

/**
 * The tenant's `count` events of the feed, oldest first, once all are numbered (numbering follows
 * the commit): what each was, to name them in expectations.
 */
async function feed(key: string, count: number): Promise<Array<Sent & { event_id: string }>> {
  const deadline = Date.now() + 5000;
  let events: any[];
  for (;;) {
    events = (await ok(call(key, 'GET', '/v1/events?limit=200'))).data;
    if (events.length >= count || Date.now() > deadline) break;
    await sleep(50);
  }
  expect(events).toHaveLength(count);
  return events.map((event) => ({
    event_id: event.event_id,
    type: event.type,
    taskId: event.data.object.task_id,
    previous: Object.keys(event.data.previous ?? {}).filter((field) => field !== 'updated_at'),
  }));
}

/**
 * What the endpoint was sent, as events of the feed, oldest first, once the tenant's last event
 * (which the test makes one the endpoint wants) is planned for it and every attempt has
 * succeeded: planning takes a tenant's events in order, so every earlier one was planned by
 * then, and the log holds all there will be.
 */
async function sentTo(
  key: string,
  endpointId: string,
  path: string,
  events: Array<Sent & { event_id: string }>,
): Promise<Sent[]> {
  const last = events[events.length - 1].event_id;
  const deadline = Date.now() + 10_000;
  let log: Array<{ event_id: string; status: string }>;
  for (;;) {
    log = (await ok(call(key, 'GET', `/v1/webhook-endpoints/${endpointId}/deliveries?limit=200`)))
      .data;
    const done =
      log.some((attempt) => attempt.event_id === last) &&
      log.every((attempt) => attempt.status === 'succeeded');
    if (done || Date.now() > deadline) break;
    await sleep(50);
  }
  const logged = new Set(log.map((attempt) => attempt.event_id));
  // Every planned event reached the receiver, as the Event the feed shows.
  const received = receiver.received
    .filter((request) => request.path === path)
    .map((request) => JSON.parse(request.body).event_id as string);
  expect(new Set(received)).toEqual(logged);
  return events
    .filter((event) => logged.has(event.event_id))
    .map(({ type, taskId, previous }) => ({ type, taskId, previous }));
}

const project = (type: string, ...previous: string[]): Sent => ({
  type,
  taskId: undefined,
  previous,
});
const task = (type: string, taskId: string, ...previous: string[]): Sent => ({
  type,
  taskId,
  previous,
});

it('sends a task.updated to an endpoint with fields only when one of them changed; other events as ever', async () => {
  const key = await newKey();
  const endpointId = await register(key, '/fields', { fields: ['status'] });
  const projectId = await newProject(key);
  const taskId = await newTask(key, projectId);
  await patchTask(key, taskId, { title: 'renamed' });
  await patchTask(key, taskId, { status: 'in_progress' });
  await patchTask(key, taskId, { labels: ['ops'], priority: 'high' });
  await patchTask(key, taskId, { title: 'again', status: 'cancelled' });
  await ok(call(key, 'PATCH', `/v1/projects/${projectId}`, { name: 'renamed' }));
  await deleteTask(key, taskId);

  expect(await sentTo(key, endpointId, '/fields', await feed(key, 8))).toEqual([
    project('project.created'),
    task('task.created', taskId),
    task('task.updated', taskId, 'status'),
    task('task.updated', taskId, 'title', 'status', 'completed_at'),
    project('project.updated', 'name'),
    task('task.deleted', taskId),
  ]);
});

it('sends a task event to a filtered endpoint when the task matches before or after the change, and everything to the tenant’s other endpoint', async () => {
  const key = await newKey();
  const filtered = await register(key, '/filtered', { filter: { labels: { has: 'ops' } } });
  const unfiltered = await register(key, '/unfiltered');
  const projectId = await newProject(key);
  const gains = await newTask(key, projectId);
  await patchTask(key, gains, { labels: ['Ops', 'web'] }); // matches after
  await patchTask(key, gains, { title: 'still ops' }); // matches before and after
  await patchTask(key, gains, { labels: ['web'] }); // matched before
  await patchTask(key, gains, { title: 'no longer ops' }); // matches neither
  const never = await newTask(key, projectId, { labels: ['web'] });
  await patchTask(key, never, { status: 'done' });
  await deleteTask(key, never);
  const born = await newTask(key, projectId, { labels: ['OPS'] });
  await ok(call(key, 'PATCH', `/v1/projects/${projectId}`, { name: 'renamed' }));
  await deleteTask(key, born);

  const events = await feed(key, 12);
  expect(await sentTo(key, filtered, '/filtered', events)).toEqual([
    project('project.created'),
    task('task.updated', gains, 'labels'),
    task('task.updated', gains, 'title'),
    task('task.updated', gains, 'labels'),
    task('task.created', born),
    project('project.updated', 'name'),
    task('task.deleted', born),
  ]);
  expect(await sentTo(key, unfiltered, '/unfiltered', events)).toEqual(
    events.map(({ type, taskId, previous }) => ({ type, taskId, previous })),
  );
});

it('reads text in the title and the description before and after the change, whichever part of the filter decides', async () => {
  const key = await newKey();
  const endpointId = await register(key, '/text', {
    filter: { any: [{ text: 'launch' }, { status: { in: ['cancelled'] } }] },
  });
  const projectId = await newProject(key);
  const launch = await newTask(key, projectId, { title: 'Launch plan' });
  await patchTask(key, launch, { title: 'Other plan' }); // matched before
  await patchTask(key, launch, { status: 'in_progress' }); // matches neither
  await patchTask(key, launch, { description: 'For the LAUNCH.' }); // matches after
  await patchTask(key, launch, { priority: 'high' }); // matches before and after
  await patchTask(key, launch, { description: 'Launcher', status: 'cancelled' }); // both parts
  const other = await newTask(key, projectId, { title: 'Unrelated', description: 'launchpad' });
  await patchTask(key, other, { status: 'done' });
  await deleteTask(key, launch);

  expect(await sentTo(key, endpointId, '/text', await feed(key, 10))).toEqual([
    project('project.created'),
    task('task.created', launch),
    task('task.updated', launch, 'title'),
    task('task.updated', launch, 'description'),
    task('task.updated', launch, 'priority'),
    task('task.updated', launch, 'description', 'status', 'completed_at'),
    task('task.deleted', launch),
  ]);
});

it('takes a filter and fields together: both must want a task.updated', async () => {
  const key = await newKey();
  const endpointId = await register(key, '/both', {
    event_types: ['task.created', 'task.updated'],
    filter: { priority: { gte: 'high' } },
    fields: ['status', 'assignee'],
  });
  const projectId = await newProject(key);
  const urgent = await newTask(key, projectId, { priority: 'urgent' });
  await patchTask(key, urgent, { title: 'renamed' }); // neither field
  await patchTask(key, urgent, { assignee: 'ana@example.com' });
  const low = await newTask(key, projectId, { priority: 'low' });
  await patchTask(key, low, { status: 'in_progress' }); // not high before or after
  await patchTask(key, low, { status: 'done', priority: 'urgent' }); // high after

  expect(await sentTo(key, endpointId, '/both', await feed(key, 7))).toEqual([
    task('task.created', urgent),
    task('task.updated', urgent, 'assignee'),
    task('task.updated', low, 'status', 'completed_at', 'priority'),
  ]);
});

it('shows filter and fields in the endpoint’s answers, replaces them with PATCH, removes them with null', async () => {
  const key = await newKey();
  const filter = { all: [{ status: { in: ['pending'] } }, { labels: { has_any: ['a', 'b'] } }] };
  const created = await ok(
    call(key, 'POST', '/v1/webhook-endpoints', {
      url: `${receiver.origin}/shown`,
      filter,
      fields: ['status', 'labels'],
    }),
    201,
  );
  expect(created).toMatchObject({ filter, fields: ['status', 'labels'] });
  const path = `/v1/webhook-endpoints/${created.webhook_endpoint_id}`;
  const { secret: _secret, ...shown } = created;
  expect(await ok(call(key, 'GET', path))).toEqual(shown);
  expect((await ok(call(key, 'GET', '/v1/webhook-endpoints'))).data).toEqual([shown]);

  // Absent: kept; a new value: replaced; null: removed.
  expect(await ok(call(key, 'PATCH', path, { description: 'kept' }))).toMatchObject({
    filter,
    fields: ['status', 'labels'],
  });
  expect(
    await ok(call(key, 'PATCH', path, { filter: { text: 'launch' }, fields: ['title'] })),
  ).toMatchObject({ filter: { text: 'launch' }, fields: ['title'] });
  expect(await ok(call(key, 'PATCH', path, { filter: null }))).toMatchObject({
    filter: null,
    fields: ['title'],
  });
  expect(await ok(call(key, 'PATCH', path, { fields: null }))).toMatchObject({
    filter: null,
    fields: null,
  });
  expect(await ok(call(key, 'GET', path))).toMatchObject({ filter: null, fields: null });

  // Registered without them, an endpoint has neither.
  expect(
    await ok(call(key, 'POST', '/v1/webhook-endpoints', { url: `${receiver.origin}/bare` }), 201),
  ).toMatchObject({ filter: null, fields: null });
});

it('refuses bad filters and fields with a 400 pointing at the fault, and stores nothing', async () => {
  const key = await newKey();
  const url = `${receiver.origin}/refused`;
  const endpointId = await register(key, '/refused', { fields: ['title'] });
  const path = `/v1/webhook-endpoints/${endpointId}`;
  const before = await ok(call(key, 'GET', path));
  const deep = { not: { not: { not: { not: { status: { in: ['done'] } } } } } };
  const refusals: Array<[object, string]> = [
    [{ fields: ['status', 'title', 'updated_at'] }, '/fields/2'],
    [{ fields: [] }, '/fields'],
    [{ fields: ['status', 'status'] }, '/fields'],
    [{ fields: 'status' }, '/fields'],
    [
      { filter: { all: [{ status: { in: ['done'] } }, { labels: { has: 7 } }] } },
      '/filter/all/1/labels/has',
    ],
    [
      { filter: { all: [{ status: { in: ['done'] } }, { labels: { has: 'ok', is: 'x' } }] } },
      '/filter/all/1/labels/is',
    ],
    [{ filter: { tilte: { eq: 'x' } } }, '/filter/tilte'],
    [{ filter: { text: 'an ox' } }, '/filter/text'],
    [{ filter: deep }, '/filter/not/not/not'],
    [{ filter: [] }, '/filter'],
  ];
  for (const [sent, pointer] of refusals) {
    for (const [method, target, body] of [
      ['POST', '/v1/webhook-endpoints', { url, ...sent }],
      ['PATCH', path, sent],
    ] as const) {
      const answer = await call(key, method, target, body);
      expect([method, sent, answer.status, answer.json.type]).toEqual([
        method,
        sent,
        400,
        '/problems/invalid-request',
      ]);
      expect(answer.json.errors).toContainEqual(expect.objectContaining({ in: 'body', pointer }));
    }
  }
  expect(await ok(call(key, 'GET', path))).toEqual(before);
  expect((await ok(call(key, 'GET', '/v1/webhook-endpoints'))).data).toEqual([before]);
});

it('neither shows nor takes filter and fields in 2026-11-28, and keeps an endpoint in it without them', async () => {
  const key = await newKey();
  const url = `${receiver.origin}/older`;
  for (const [field, value] of [
    ['filter', { status: { in: ['done'] } }],
    ['fields', ['status']],
  ] as const) {
    const created = await call(
      key,
      'POST',
      '/v1/webhook-endpoints',
      { url, [field]: value },
      older,
    );
    expect(created.status).toBe(400);
    expect(created.json.errors).toContainEqual(
      expect.objectContaining({ in: 'body', pointer: `/${field}` }),
    );
  }
  expect((await ok(call(key, 'GET', '/v1/webhook-endpoints', undefined, older))).data).toEqual([]);

  // Made in the newest with both, the endpoint reads in 2026-11-28 without them, and keeps them
  // through a 2026-11-28 change.
  const subscribed = await register(key, '/older', {
    filter: { text: 'launch' },
    fields: ['title'],
  });
  const path = `/v1/webhook-endpoints/${subscribed}`;
  const read = await ok(call(key, 'GET', path, undefined, older));
  expect(read).not.toHaveProperty('filter');
  expect(read).not.toHaveProperty('fields');
  const patched = await call(key, 'PATCH', path, { fields: null }, older);
  expect(patched.status).toBe(400);
  expect(patched.json.errors).toContainEqual(expect.objectContaining({ pointer: '/fields' }));
  expect(await ok(call(key, 'PATCH', path, { description: 'older' }, older))).not.toHaveProperty(
    'fields',
  );
  expect(await ok(call(key, 'GET', path))).toMatchObject({
    filter: { text: 'launch' },
    fields: ['title'],
  });

  // An endpoint moves to 2026-11-28 only without them.
  const moved = await call(key, 'PATCH', path, { api_version: older });
  expect(moved.status).toBe(400);
  expect(moved.json.errors).toEqual([
    expect.objectContaining({ in: 'body', pointer: '/api_version' }),
  ]);
  const halfway = await call(key, 'PATCH', path, { api_version: older, filter: null });
  expect(halfway.json.errors).toEqual([
    expect.objectContaining({ in: 'body', pointer: '/api_version' }),
  ]);
  expect(
    await ok(call(key, 'PATCH', path, { api_version: older, filter: null, fields: null })),
  ).toMatchObject({ api_version: older, filter: null, fields: null });

  // An endpoint of 2026-11-28 takes them only as it moves to a version that has them.
  const gains = await call(key, 'PATCH', path, { filter: { text: 'launch' } });
  expect(gains.status).toBe(400);
  expect(gains.json.errors).toEqual([expect.objectContaining({ in: 'body', pointer: '/filter' })]);
  expect(
    await ok(call(key, 'PATCH', path, { api_version: newest, filter: { text: 'launch' } })),
  ).toMatchObject({ api_version: newest, filter: { text: 'launch' }, fields: null });
});
