/**
 * The client kit's own contract: what `@task-tracker/client` sends and what it relies on in the
 * answers, as Pact consumer tests. They write `task-tracker-client-kit-task-tracker.json` into
 * PACT_DIR (default clients/typescript/pacts), which `make test` verifies against the service with
 * `npm run -s contract -- verify-pact`, so the kit and the service cannot drift apart. Every request
 * names its API version (`Api-Version`), which verify-pact and check-pact check it in: a kit made
 * without `apiVersion` is in `2026-11-28`, one made with it in that version.
 */
import path from 'node:path';
import { MatchersV3, PactV3 } from '@pact-foundation/pact';
import { createClient, ProblemError, type ApiVersion, type TaskFilter } from '@task-tracker/client';

const { eachLike, fromProviderState, integer, like, regex, uuid } = MatchersV3;

const pact = new PactV3({
  consumer: 'task-tracker-client-kit',
  provider: 'task-tracker',
  dir: process.env.PACT_DIR ?? path.join(__dirname, '..', 'pacts'),
  logLevel: 'error',
});

const someId = '0193a5b3-1d20-7e55-8c3f-6a7b8c9d0e12';
const timestamp = regex(
  '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z$',
  '2026-11-21T09:31:12.456Z',
);
/** What every request of a kit in `version` carries: its key and its version. */
const sentBy = (version: ApiVersion = '2026-11-28') => ({
  Authorization: regex('^Bearer .+$', 'Bearer any-key'),
  'Api-Version': version,
});
const authorization = sentBy();
const json = { 'Content-Type': regex('^application/json(;.*)?$', 'application/json') };
const problemJson = {
  'Content-Type': regex('^application/problem\\+json(;.*)?$', 'application/problem+json'),
};
const project = {
  project_id: uuid(someId),
  name: like('Website relaunch'),
  description: like(''),
  created_at: timestamp,
  updated_at: timestamp,
};
const task = (status: string) => ({
  task_id: uuid(someId),
  project_id: uuid(someId),
  title: like('Write the announcement'),
  description: null,
  status,
  created_at: timestamp,
  updated_at: timestamp,
});
const client = (url: string, apiKey = 'any-key') => createClient({ baseUrl: url, apiKey });

test('projects.create sends the project and reads the created one', async () => {
  pact
    .uponReceiving('the kit creates a project')
    .withRequest({
      method: 'POST',
      path: '/v1/projects',
      headers: { ...authorization, 'Content-Type': 'application/json' },
      body: { name: 'Website relaunch' },
    })
    .willRespondWith({
      status: 201,
      headers: json,
      body: { ...project, name: 'Website relaunch' },
    });
  await pact.executeTest(async (mock) => {
    const created = await client(mock.url).projects.create({ name: 'Website relaunch' });
    expect(created.name).toBe('Website relaunch');
  });
});

test('projects.get reads a project by id', async () => {
  pact
    .given('a project exists', { name: 'Quarterly report' })
    .uponReceiving('the kit reads a project')
    .withRequest({
      method: 'GET',
      path: fromProviderState('/v1/projects/${project_id}', `/v1/projects/${someId}`),
      headers: authorization,
    })
    .willRespondWith({
      status: 200,
      headers: json,
      body: { ...project, name: 'Quarterly report' },
    });
  await pact.executeTest(async (mock) => {
    expect((await client(mock.url).projects.get(someId)).name).toBe('Quarterly report');
  });
});

test('tasks.update moves a task on, only if it has not changed since (If-Match)', async () => {
  pact
    .given('a task exists', { status: 'pending' })
    .uponReceiving('the kit moves a task to in_progress with its ETag')
    .withRequest({
      method: 'PATCH',
      path: fromProviderState('/v1/tasks/${task_id}', `/v1/tasks/${someId}`),
      headers: {
        ...authorization,
        'If-Match': fromProviderState('${etag}', '"1"'),
        'Content-Type': regex('^application/(merge-patch\\+)?json$', 'application/json'),
      },
      body: { status: 'in_progress' },
    })
    .willRespondWith({ status: 200, headers: json, body: task('in_progress') });
  await pact.executeTest(async (mock) => {
    const moved = await client(mock.url).tasks.update(
      someId,
      { status: 'in_progress' },
      { ifMatch: '"1"' },
    );
    expect(moved.status).toBe('in_progress');
  });
});

test('in 2026-12-15, tasks.update cancels a task and reads its completed_at', async () => {
  pact
    .given('a task exists', { status: 'in_progress' })
    .uponReceiving('the kit in 2026-12-15 cancels a task')
    .withRequest({
      method: 'PATCH',
      path: fromProviderState('/v1/tasks/${task_id}', `/v1/tasks/${someId}`),
      headers: {
        ...sentBy('2026-12-15'),
        'Content-Type': regex('^application/(merge-patch\\+)?json$', 'application/json'),
      },
      body: { status: 'cancelled' },
    })
    .willRespondWith({
      status: 200,
      headers: { ...json, 'Api-Version': '2026-12-15' },
      body: { ...task('cancelled'), completed_at: timestamp },
    });
  await pact.executeTest(async (mock) => {
    const kit = createClient({ baseUrl: mock.url, apiKey: 'any-key', apiVersion: '2026-12-15' });
    const cancelled = await kit.tasks.update(someId, { status: 'cancelled' });
    expect([cancelled.status, typeof cancelled.completed_at]).toEqual(['cancelled', 'string']);
  });
});

/** A bulk change as the kit sends it: in 2026-12-15, with an Idempotency-Key made for the call. */
const bulkHeaders = {
  ...sentBy('2026-12-15'),
  'Content-Type': 'application/json',
  'Idempotency-Key': regex('^\\S+$', '0193a5b3-0000-7000-8000-00000000beef'),
};
/** Ben's overdue tasks of high priority or above on 2026-12-01 (the state's first two). */
const overdue: TaskFilter = {
  all: [
    { assignee: { eq: 'ben' } },
    { priority: { gte: 'high' } },
    { due_on: { lt: '2026-12-01' } },
    { status: { in: ['pending', 'in_progress'] } },
  ],
};
const plannedTasks = ['tasks with labels and due dates exist', { assignee: 'ben' }] as const;
const newestClient = (url: string) =>
  createClient({ baseUrl: url, apiKey: 'any-key', apiVersion: '2026-12-15' });

test('in 2026-12-15, tasks.search walks the tasks a filter matches', async () => {
  pact
    .given(...plannedTasks)
    .uponReceiving('the kit in 2026-12-15 searches the overdue tasks of high priority')
    .withRequest({
      method: 'POST',
      path: '/v1/tasks/search',
      headers: { ...sentBy('2026-12-15'), 'Content-Type': 'application/json' },
      body: { filter: overdue, sort: 'created_at' },
    })
    .willRespondWith({
      status: 200,
      headers: { ...json, 'Api-Version': '2026-12-15' },
      body: {
        data: [
          { ...task('pending'), priority: 'urgent', due_on: '2026-11-20', assignee: 'ben' },
          { ...task('in_progress'), priority: 'high', due_on: '2026-11-25', assignee: 'ben' },
        ],
        next_cursor: null,
      },
    });
  await pact.executeTest(async (mock) => {
    const found = await newestClient(mock.url)
      .tasks.search(overdue, { sort: 'created_at' })
      .toArray({ max: 10 });
    expect(found.map((each) => [each.priority, each.due_on])).toEqual([
      ['urgent', '2026-11-20'],
      ['high', '2026-11-25'],
    ]);
  });
});

test('in 2026-12-15, tasks.bulkUpdate previews a change by filter with dry_run', async () => {
  pact
    .given(...plannedTasks)
    .uponReceiving('the kit in 2026-12-15 previews starting the overdue tasks')
    .withRequest({
      method: 'POST',
      path: '/v1/tasks/bulk-update',
      headers: bulkHeaders,
      body: { filter: overdue, changes: { status: 'in_progress' }, dry_run: true },
    })
    .willRespondWith({
      status: 200,
      headers: json,
      body: { matched: 2, changed: 1, task_ids: eachLike(uuid(someId), 1), dry_run: true },
    });
  await pact.executeTest(async (mock) => {
    const preview = await newestClient(mock.url).tasks.bulkUpdate({
      filter: overdue,
      changes: { status: 'in_progress' },
      dryRun: true,
    });
    expect([preview.matched, preview.changed, preview.dry_run]).toEqual([2, 1, true]);
  });
});

test('in 2026-12-15, tasks.bulkUpdate and bulkDelete change tasks by id', async () => {
  const [second, fourth] = [someId, '0193a5b3-5a71-7f02-b4d6-0e1f2a3b4c5d'];
  pact
    .given(...plannedTasks)
    .uponReceiving('the kit in 2026-12-15 labels two tasks by id')
    .withRequest({
      method: 'POST',
      path: '/v1/tasks/bulk-update',
      headers: bulkHeaders,
      body: {
        task_ids: [
          fromProviderState('${task_id_2}', second),
          fromProviderState('${task_id_4}', fourth),
        ],
        changes: { labels_add: ['release'] },
        dry_run: false,
      },
    })
    .willRespondWith({
      status: 200,
      headers: json,
      body: { matched: 2, changed: 2, task_ids: eachLike(uuid(someId), 2), dry_run: false },
    });
  pact
    .given(...plannedTasks)
    .uponReceiving('the kit in 2026-12-15 deletes a task by id')
    .withRequest({
      method: 'POST',
      path: '/v1/tasks/bulk-delete',
      headers: bulkHeaders,
      body: { task_ids: [fromProviderState('${task_id_4}', fourth)], dry_run: false },
    })
    .willRespondWith({
      status: 200,
      headers: json,
      body: { matched: 1, changed: 1, task_ids: [uuid(fourth)], dry_run: false },
    });
  await pact.executeTest(async (mock) => {
    const kit = newestClient(mock.url);
    const [labelled, deleted] = await Promise.all([
      kit.tasks.bulkUpdate({ task_ids: [second, fourth], changes: { labels_add: ['release'] } }),
      kit.tasks.bulkDelete({ task_ids: [fourth] }),
    ]);
    expect([labelled.changed, deleted.task_ids]).toEqual([2, [fourth]]);
  });
});

test('tasks.list walks a project’s tasks', async () => {
  pact
    .given('a project with tasks exists', { count: 2, status: 'done' })
    .uponReceiving('the kit lists the done tasks of a project')
    .withRequest({
      method: 'GET',
      path: fromProviderState('/v1/projects/${project_id}/tasks', `/v1/projects/${someId}/tasks`),
      query: { status: 'done' },
      headers: authorization,
    })
    .willRespondWith({
      status: 200,
      headers: json,
      body: { data: eachLike(task('done'), 2), next_cursor: null },
    });
  await pact.executeTest(async (mock) => {
    const statuses: string[] = [];
    for await (const each of client(mock.url).tasks.list(someId, { status: ['done'] }))
      statuses.push(each.status);
    expect(statuses).toEqual(['done', 'done']);
  });
});

test('a task that does not exist is a ProblemError of type not-found', async () => {
  pact
    .given('nothing exists')
    .uponReceiving('the kit reads a task that does not exist')
    .withRequest({
      method: 'GET',
      path: fromProviderState('/v1/tasks/${task_id}', `/v1/tasks/${someId}`),
      headers: authorization,
    })
    .willRespondWith({
      status: 404,
      headers: problemJson,
      body: { type: '/problems/not-found', title: like('Not found'), status: 404 },
    });
  await pact.executeTest(async (mock) => {
    const error = await client(mock.url)
      .tasks.get(someId)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProblemError);
    expect((error as ProblemError).problem.type).toBe('/problems/not-found');
  });
});

test('a key the service does not know is a ProblemError of type unauthenticated', async () => {
  pact
    .uponReceiving('the kit lists projects with an invalid key')
    .withRequest({
      method: 'GET',
      path: '/v1/projects',
      headers: { Authorization: 'Bearer invalid', 'Api-Version': '2026-11-28' },
    })
    .willRespondWith({
      status: 401,
      headers: problemJson,
      body: { type: '/problems/unauthenticated', status: 401 },
    });
  await pact.executeTest(async (mock) => {
    const error = await client(mock.url, 'invalid')
      .projects.list()
      .toArray({ max: 1 })
      .catch((caught: unknown) => caught);
    expect((error as ProblemError).problem.status).toBe(401);
  });
});

test('events.page reads the feed from a cursor', async () => {
  pact
    .given('the feed has events', { count: 2 })
    .uponReceiving('the kit reads the first event of the feed from a cursor')
    .withRequest({
      method: 'GET',
      path: '/v1/events',
      query: { cursor: fromProviderState('${cursor}', 'eyJhZnRlciI6MH0'), limit: '1' },
      headers: authorization,
    })
    .willRespondWith({
      status: 200,
      headers: json,
      body: {
        data: [
          {
            event_id: uuid(someId),
            sequence: integer(1),
            type: 'project.created',
            created_at: timestamp,
            project_id: uuid(someId),
            request_id: like(someId),
            data: { object: project },
          },
        ],
        next_cursor: like('eyJhZnRlciI6MX0'),
        has_more: true,
      },
    });
  await pact.executeTest(async (mock) => {
    const page = await client(mock.url).events.page({ cursor: 'eyJhZnRlciI6MH0', limit: 1 });
    expect(page.data.map((event) => event.type)).toEqual(['project.created']);
    expect(page.has_more).toBe(true);
  });
});

test('webhookEndpoints.get reads an endpoint', async () => {
  pact
    .given('a webhook endpoint exists', { event_types: ['task.created'] })
    .uponReceiving('the kit reads a webhook endpoint')
    .withRequest({
      method: 'GET',
      path: fromProviderState(
        '/v1/webhook-endpoints/${webhook_endpoint_id}',
        `/v1/webhook-endpoints/${someId}`,
      ),
      headers: authorization,
    })
    .willRespondWith({
      status: 200,
      headers: json,
      body: {
        webhook_endpoint_id: uuid(someId),
        url: like('https://example.com/hooks'),
        event_types: ['task.created'],
        enabled: true,
      },
    });
  await pact.executeTest(async (mock) => {
    expect((await client(mock.url).webhookEndpoints.get(someId)).event_types).toEqual([
      'task.created',
    ]);
  });
});
