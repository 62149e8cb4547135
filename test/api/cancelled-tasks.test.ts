/**
 * Version 2026-12-15 beside 2026-11-28, end to end (issue 45; contract-decisions "What
 * `2026-12-15` changes"): a task can be cancelled and says when it was closed; in 2026-11-28 a
 * cancelled task reads as done everywhere — answers, lists and their `status` filter, the feed,
 * `data.previous`, webhooks — `completed_at` and an endpoint's `api_version` are absent, and
 * `cancelled` sent is a 400 naming `/status`. Webhooks come in their endpoint's version, with an
 * `Api-Version` header, signed as sent. Every answer is checked against its version's document.
 */
import { Webhook } from 'standardwebhooks';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { startTestService, type TestService } from '../support/test-service';

const [newest, older] = ['2026-12-15', '2026-11-28'];
let api: TestService;
let receiver: WebhookReceiver;
let key: string;
let projectId: string;

beforeAll(async () => {
  [api, receiver] = await Promise.all([
    startTestService({ config: { webhookAllowPrivateTargets: true } }),
    startReceiver(),
  ]);
  key = await api.createKey('cancelled-tasks');
  projectId = (await call('POST', '/v1/projects', newest, { name: 'versions' })).json.project_id;
});
afterAll(async () => {
  await api.stop();
  await receiver.stop();
});

async function call(method: string, path: string, version: string, body?: unknown) {
  const headers: Record<string, string> = { 'Api-Version': version };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const answer = await api.send(method, path, {
    key,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (answer.status < 400) expect(answer.headers.get('api-version')).toBe(version);
  return answer;
}

const newTask = async (title: string) =>
  (await call('POST', '/v1/tasks', newest, { project_id: projectId, title })).json;
const move = (taskId: string, status: string, version = newest) =>
  call('PATCH', `/v1/tasks/${taskId}`, version, { status });

it('answers a cancelled task as cancelled with completed_at in 2026-12-15, and as done without it in 2026-11-28', async () => {
  const task = await newTask('cancel me');
  const cancelled = await move(task.task_id, 'cancelled');
  expect(cancelled.json).toMatchObject({
    status: 'cancelled',
    completed_at: cancelled.json.updated_at,
  });

  const read = await call('GET', `/v1/tasks/${task.task_id}`, older);
  // The planning fields are another change's (planning-fields.ts), absent in 2026-11-28 too.
  const {
    completed_at: _closed,
    priority: _priority,
    due_on: _due,
    labels: _labels,
    assignee: _assignee,
    ...asDone
  } = { ...cancelled.json, status: 'done' };
  expect(read.json).toEqual(asDone);
  // The same state, so the same entity tag in every version.
  expect(read.headers.get('etag')).toBe(cancelled.headers.get('etag'));
});

it('refuses cancelled sent in 2026-11-28 with a 400 naming /status, and lets it make a cancelled task done', async () => {
  const task = await newTask('refused');
  const refused = await move(task.task_id, 'cancelled', older);
  expect(refused.status).toBe(400);
  expect(refused.json.errors).toEqual([
    expect.objectContaining({
      pointer: '/status',
      message: 'must be one of: pending, in_progress, done',
    }),
  ]);
  expect(refused.json.detail).toContain(
    'It is valid in API version 2026-12-15: send Api-Version: 2026-12-15 to use it.',
  );
  expect((await call('GET', `/v1/tasks/${task.task_id}`, newest)).json.status).toBe('pending');

  const cancelled = await move(task.task_id, 'cancelled');
  const done = await move(task.task_id, 'done', older);
  expect(done.status).toBe(200);
  expect(done.json.status).toBe('done');
  const now = (await call('GET', `/v1/tasks/${task.task_id}`, newest)).json;
  // Closed all along: done from cancelled keeps when it was closed.
  expect(now).toMatchObject({ status: 'done', completed_at: cancelled.json.completed_at });
});

it("lists a cancelled task under 2026-11-28's status=done, and only under cancelled in 2026-12-15", async () => {
  const project = (await call('POST', '/v1/projects', newest, { name: 'filters' })).json.project_id;
  const add = async (title: string, status?: string) => {
    const task = (await call('POST', '/v1/tasks', newest, { project_id: project, title })).json;
    if (status) await move(task.task_id, status);
    return task.task_id as string;
  };
  const open = await add('open');
  const done = await add('done', 'done');
  const cancelled = await add('cancelled', 'cancelled');
  const list = async (version: string, query: string) => {
    const page = await call('GET', `/v1/projects/${project}/tasks?${query}`, version);
    expect(page.status).toBe(200);
    return page.json.data.map((t: { task_id: string; status: string }) => [t.task_id, t.status]);
  };
  expect(await list(older, 'status=done')).toEqual([
    [done, 'done'],
    [cancelled, 'done'],
  ]);
  expect(await list(older, 'status=pending&status=done')).toHaveLength(3);
  expect(await list(newest, 'status=done')).toEqual([[done, 'done']]);
  expect(await list(newest, 'status=cancelled')).toEqual([[cancelled, 'cancelled']]);
  expect(await list(older, '')).toEqual([
    [open, 'pending'],
    [done, 'done'],
    [cancelled, 'done'],
  ]);
  expect((await call('GET', `/v1/projects/${project}/tasks?status=cancelled`, older)).status).toBe(
    400,
  );
});

it('renders the feed in the reader’s version: in_progress → cancelled reads in 2026-11-28 as in_progress → done, done → cancelled as done → done', async () => {
  const task = await newTask('feed');
  const from = (await call('GET', '/v1/events?from=latest', newest)).json.next_cursor;
  await move(task.task_id, 'in_progress');
  const cancelled = await move(task.task_id, 'cancelled');
  await move(task.task_id, 'done');
  type FeedEvent = {
    type: string;
    data: { object: Record<string, unknown>; previous: unknown };
  };
  // Events are numbered just after their change commits: read until all three are there.
  const updates = async (version: string) => {
    for (let tries = 0; ; tries++) {
      const page = await call(
        'GET',
        `/v1/events?cursor=${encodeURIComponent(from)}&type=task.updated&wait=1`,
        version,
      );
      const ours = (page.json.data as FeedEvent[]).filter(
        (event) => event.data.object.task_id === task.task_id,
      );
      if (ours.length === 3 || tries === 20)
        return ours.map((event) => [
          event.type,
          event.data.object.status,
          event.data.object.completed_at,
          event.data.previous,
        ]);
    }
  };
  const closedAt = cancelled.json.completed_at;
  expect(await updates(newest)).toEqual([
    ['task.updated', 'in_progress', null, expect.objectContaining({ status: 'pending' })],
    [
      'task.updated',
      'cancelled',
      closedAt,
      expect.objectContaining({ status: 'in_progress', completed_at: null }),
    ],
    ['task.updated', 'done', closedAt, expect.objectContaining({ status: 'cancelled' })],
  ]);
  const olderUpdates = await updates(older);
  expect(olderUpdates).toEqual([
    ['task.updated', 'in_progress', undefined, expect.objectContaining({ status: 'pending' })],
    ['task.updated', 'done', undefined, expect.objectContaining({ status: 'in_progress' })],
    ['task.updated', 'done', undefined, expect.objectContaining({ status: 'done' })],
  ]);
  for (const [, , , previous] of olderUpdates) expect(previous).not.toHaveProperty('completed_at');
});

it("sends each endpoint's webhooks in its version, named by Api-Version and signed as sent; PATCH moves it", async () => {
  const made = async (version: string, path: string) => {
    const created = await call('POST', '/v1/webhook-endpoints', version, {
      url: receiver.origin + path,
      event_types: ['task.updated'],
    });
    expect(created.status).toBe(201);
    return created.json;
  };
  const olderEndpoint = await made(older, '/older');
  const newestEndpoint = await made(newest, '/newest');
  // The version of the request that made it; 2026-11-28 does not show the field at all.
  expect(olderEndpoint).not.toHaveProperty('api_version');
  const endpointPath = `/v1/webhook-endpoints/${olderEndpoint.webhook_endpoint_id}`;
  expect((await call('GET', endpointPath, newest)).json.api_version).toBe(older);
  expect(newestEndpoint.api_version).toBe(newest);

  const task = await newTask('hooked');
  await move(task.task_id, 'cancelled');
  // Only this task's: the tenant's earlier tests made other events that may still be on their way.
  const arrived = async (path: string, count: number) => {
    const ofTask = () =>
      receiver.received.filter(
        (request) => request.path === path && request.body.includes(task.task_id),
      );
    for (let waited = 0; ofTask().length < count && waited < 10_000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
    return ofTask();
  };
  const [toOlder] = await arrived('/older', 1);
  const [toNewest] = await arrived('/newest', 1);
  const verified = (secret: string, request: typeof toOlder) =>
    new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as {
      data: { object: Record<string, unknown>; previous: Record<string, unknown> };
    };
  expect(toOlder.headers['api-version']).toBe(older);
  const olderEvent = verified(olderEndpoint.secret, toOlder);
  expect(olderEvent.data.object.status).toBe('done');
  expect(olderEvent.data.object).not.toHaveProperty('completed_at');
  expect(olderEvent.data.previous).toEqual({ status: 'pending', updated_at: task.updated_at });
  expect(toNewest.headers['api-version']).toBe(newest);
  const newestEvent = verified(newestEndpoint.secret, toNewest);
  expect(newestEvent.data.object).toMatchObject({ status: 'cancelled' });
  expect(newestEvent.data.previous).toMatchObject({ status: 'pending', completed_at: null });

  // 2026-11-28 has no api_version to change: a 400 naming it, and the version that has it.
  const olderPatch = await call('PATCH', endpointPath, older, { api_version: newest });
  expect(olderPatch.status).toBe(400);
  expect(olderPatch.json.errors).toEqual([
    expect.objectContaining({ in: 'body', pointer: '/api_version' }),
  ]);
  expect(olderPatch.json.detail).toContain('valid in API version 2026-12-15');
  expect((await call('GET', endpointPath, newest)).json.api_version).toBe(older);

  // Moved to the newest version: the next delivery comes in it.
  const moved = await call('PATCH', endpointPath, newest, { api_version: newest });
  expect(moved.json.api_version).toBe(newest);
  await move(task.task_id, 'pending');
  const [, again] = await arrived('/older', 2);
  expect(again.headers['api-version']).toBe(newest);
  expect(verified(olderEndpoint.secret, again).data.previous).toMatchObject({
    status: 'cancelled',
    completed_at: expect.any(String),
  });
});
