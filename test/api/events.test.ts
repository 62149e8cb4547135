/**
 * The event feed over HTTP: each kind of change records exactly its event, each kind of failure
 * none; paging, filters, long polling, retention and tenancy.
 */
import type { components } from '../../generated/api';
import { v7 as uuidv7 } from 'uuid';
import { awaitingNumber } from '../../src/db/event-log';
import { toDbTimestamp } from '../../src/db/timestamps';
import { startTestService, type RawResponse, type TestService } from '../support/test-service';

type Event = components['schemas']['Event'];

let api: TestService;
let key: string;

beforeAll(async () => {
  api = await startTestService();
  key = await api.createKey('acme');
});
afterAll(() => api.stop());

const json = { 'Content-Type': 'application/json' };
const feed = (query = '', apiKey = key) => api.send('GET', `/v1/events${query}`, { key: apiKey });

/** Every event of the key's tenant, walking the feed from the start in pages of `limit`. */
async function walk(apiKey = key, limit = 200): Promise<Event[]> {
  const events: Event[] = [];
  let cursor = '';
  for (;;) {
    const page: RawResponse = await feed(`?limit=${limit}${cursor && `&cursor=${cursor}`}`, apiKey);
    expect(page.status).toBe(200);
    events.push(...page.json.data);
    expect(page.json.next_cursor).toEqual(expect.any(String));
    cursor = page.json.next_cursor;
    if (!page.json.has_more) return events;
  }
}

/** Waits until the feed holds `count` events: numbering follows the commit. */
async function settled(count: number, apiKey = key): Promise<Event[]> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const events = await walk(apiKey);
    if (events.length >= count || Date.now() > deadline) return events;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('each change records its event', () => {
  it('creates, updates and deletes of projects and tasks, in order, with data, previous and request_id', async () => {
    const apiKey = await api.createKey('recorder');
    const send = (method: string, path: string, requestId: string, body?: unknown) =>
      api.send(method, path, {
        key: apiKey,
        headers: { ...json, 'X-Request-Id': requestId },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const project = (
      await send('POST', '/v1/projects', 'req-1', { name: 'Launch', description: 'd' })
    ).json;
    const renamed = (
      await send('PATCH', `/v1/projects/${project.project_id}`, 'req-2', { name: 'Launch 2' })
    ).json;
    const task = (
      await send('POST', '/v1/tasks', 'req-3', { project_id: project.project_id, title: 'Write' })
    ).json;
    const started = (
      await send('PATCH', `/v1/tasks/${task.task_id}`, 'req-4', {
        status: 'in_progress',
        title: 'Write it',
      })
    ).json;
    expect((await send('DELETE', `/v1/tasks/${task.task_id}`, 'req-5')).status).toBe(204);
    await send('POST', '/v1/tasks', 'req-6', {
      project_id: project.project_id,
      title: 'Goes with the project',
    });
    expect((await send('DELETE', `/v1/projects/${project.project_id}`, 'req-7')).status).toBe(204);

    const events = await settled(7, apiKey);
    const task6 = events[5].data.object as components['schemas']['Task'];
    expect(
      events.map(({ sequence, type, request_id, project_id, data }) => ({
        sequence,
        type,
        request_id,
        project_id,
        data,
      })),
    ).toEqual([
      {
        sequence: 1,
        type: 'project.created',
        request_id: 'req-1',
        project_id: project.project_id,
        data: { object: project },
      },
      {
        sequence: 2,
        type: 'project.updated',
        request_id: 'req-2',
        project_id: project.project_id,
        data: { object: renamed, previous: { name: 'Launch', updated_at: project.updated_at } },
      },
      {
        sequence: 3,
        type: 'task.created',
        request_id: 'req-3',
        project_id: project.project_id,
        data: { object: task },
      },
      {
        sequence: 4,
        type: 'task.updated',
        request_id: 'req-4',
        project_id: project.project_id,
        data: {
          object: started,
          previous: { status: 'pending', title: 'Write', updated_at: task.updated_at },
        },
      },
      {
        sequence: 5,
        type: 'task.deleted',
        request_id: 'req-5',
        project_id: project.project_id,
        data: { object: started },
      },
      {
        sequence: 6,
        type: 'task.created',
        request_id: 'req-6',
        project_id: project.project_id,
        data: { object: task6 },
      },
      // The project's delete takes its task with it, with no event of its own.
      {
        sequence: 7,
        type: 'project.deleted',
        request_id: 'req-7',
        project_id: project.project_id,
        data: { object: renamed },
      },
    ]);
    for (const event of events) expect(event.event_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(events.every((e, i) => i === 0 || e.created_at >= events[i - 1].created_at)).toBe(true);
  });

  it('records nothing for a change that failed or was replayed', async () => {
    const apiKey = await api.createKey('failures');
    const send = (
      method: string,
      path: string,
      body?: string,
      headers: Record<string, string> = {},
    ) => api.send(method, path, { key: apiKey, headers: { ...json, ...headers }, body });
    const project = (
      await send('POST', '/v1/projects', '{"name": "p"}', { 'Idempotency-Key': 'once' })
    ).json;
    const task = (
      await send(
        'POST',
        '/v1/tasks',
        JSON.stringify({ project_id: project.project_id, title: 't' }),
      )
    ).json;
    const before = await settled(2, apiKey);
    expect(before).toHaveLength(2);

    const failures = [
      await send('POST', '/v1/projects', '{"name": ""}'),
      await send('POST', '/v1/projects', '{"name": "x\\ud800"}'),
      await send(
        'POST',
        '/v1/tasks',
        JSON.stringify({ project_id: '0193a5b2-7c3e-7d41-9a6b-2f1e4c8d9a01', title: 't' }),
      ),
      await send('PATCH', `/v1/tasks/${task.task_id}`, '{"status": "done"}', { 'If-Match': '"7"' }),
      await send('DELETE', `/v1/tasks/${task.task_id}`, undefined, { 'If-Match': '"7"' }),
      await send('PATCH', '/v1/tasks/0193a5b3-1d20-7e55-8c3f-6a7b8c9d0e12', '{"status": "done"}'),
      await send('DELETE', '/v1/projects/0193a5b2-7c3e-7d41-9a6b-2f1e4c8d9a01'),
      await send('POST', '/v1/projects', '{"name": "p"}', { 'Idempotency-Key': 'once' }),
    ];
    expect(failures.map((f) => f.status)).toEqual([400, 400, 422, 412, 412, 404, 404, 201]);
    expect(failures[7].headers.get('idempotent-replayed')).toBe('true');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await walk(apiKey)).toEqual(before);
  });
});

describe('GET /v1/events', () => {
  let projectA: string;
  let projectB: string;
  let events: Event[];

  beforeAll(async () => {
    const client = api.client(key);
    projectA = (await client.POST('/v1/projects', { body: { name: 'A' } })).data!.project_id;
    projectB = (await client.POST('/v1/projects', { body: { name: 'B' } })).data!.project_id;
    for (let i = 0; i < 3; i++) {
      const task = (
        await client.POST('/v1/tasks', {
          body: { project_id: i % 2 ? projectB : projectA, title: `t${i}` },
        })
      ).data!;
      await client.PATCH('/v1/tasks/{task_id}', {
        params: { path: { task_id: task.task_id } },
        body: { status: 'done' },
      });
    }
    events = await settled(8);
  });

  it('numbers the events 1..n with no gap, and pages through them with next_cursor and has_more', async () => {
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(await walk(key, 3)).toEqual(events);
    const first = await feed('?limit=3');
    expect(first.json.has_more).toBe(true);
    expect(first.json.data.map((e: Event) => e.sequence)).toEqual([1, 2, 3]);
  });

  it('answers an empty page at the end with the same cursor, never null', async () => {
    const end = (await feed('?limit=200')).json.next_cursor;
    const again = await feed(`?cursor=${end}`);
    expect(again.json).toEqual({ data: [], next_cursor: end, has_more: false });
  });

  it('filters by type and project, and the cursor moves past what the filters leave out', async () => {
    const created = await feed('?type=task.created&type=project.created&type=task.created');
    expect(created.json.data.map((e: Event) => e.type)).toEqual([
      'project.created',
      'project.created',
      'task.created',
      'task.created',
      'task.created',
    ]);
    const ofB = await feed(`?project_id=${projectB}`);
    expect(ofB.json.data.map((e: Event) => e.sequence)).toEqual(
      events.filter((e) => e.project_id === projectB).map((e) => e.sequence),
    );
    const onlyB = await feed(`?project_id=${projectB}&type=task.updated`);
    expect(onlyB.json.data).toHaveLength(1);
    // Nothing matching is left after the last event: the cursor is at the end of the feed.
    expect((await feed(`?cursor=${onlyB.json.next_cursor}`)).json.data).toEqual([]);
  });

  it("shows a key only its own tenant's events, and needs the read scope", async () => {
    const other = await api.createKey('globex');
    expect((await feed('', other)).json.data).toEqual([]);
    expect((await feed(`?project_id=${projectA}`, other)).json.data).toEqual([]);
    const writeOnly = await api.createKey('acme', ['write']);
    const refused = await feed('', writeOnly);
    expect(refused.status).toBe(403);
    expect((await api.send('GET', '/v1/events')).status).toBe(401);
  });

  it.each([
    'cursor=%%%',
    'cursor=eyJhZnRlciI6LTF9',
    'wait=31',
    'wait=1e1',
    'limit=0',
    'type=task.moved',
    'project_id=nope',
  ])('refuses %s with 400', async (query) => {
    const res = await feed(`?${query}`);
    expect(res.status).toBe(400);
  });
});

describe('a rolling upgrade', () => {
  it('numbers an event that an older instance wrote without a sequence (NULL)', async () => {
    const apiKey = await api.createKey('upgrade');
    const { data: project } = await api
      .client(apiKey)
      .POST('/v1/projects', { body: { name: 'upgraded' } });
    await settled(1, apiKey);
    const [written] = await api.service.knex('events').where('project_id', project!.project_id);
    await api.service
      .knex('events')
      .insert({ ...written, event_id: uuidv7(), sequence: null, request_id: 'older-instance' });
    expect((await settled(2, apiKey)).map((e) => e.request_id)).toEqual([
      written.request_id,
      'older-instance',
    ]);
    await api.client(apiKey).PATCH('/v1/projects/{project_id}', {
      params: { path: { project_id: project!.project_id } },
      body: { name: 'after' },
    });

    const events = await settled(3, apiKey);
    expect(events.map((e) => [e.sequence, e.type])).toEqual([
      [1, 'project.created'],
      [2, 'project.created'],
      [3, 'project.updated'],
    ]);
    expect(events[1].request_id).toBe('older-instance');
  });
});

describe('long polling', () => {
  const endCursor = async (apiKey = key) =>
    (await feed('?limit=200', apiKey)).json.next_cursor as string;

  it('answers wait=0 at once, and an idle wait=1 after about a second with nothing', async () => {
    const cursor = await endCursor();
    let started = Date.now();
    expect((await feed(`?cursor=${cursor}&wait=0`)).json.data).toEqual([]);
    expect(Date.now() - started).toBeLessThan(500);
    started = Date.now();
    const idle = await feed(`?cursor=${cursor}&wait=1`);
    expect(idle.json).toEqual({ data: [], next_cursor: cursor, has_more: false });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('answers within a second of a change', async () => {
    const cursor = await endCursor();
    const started = Date.now();
    const polled = feed(`?cursor=${cursor}&wait=20`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const changedAt = Date.now();
    await api.client(key).POST('/v1/projects', { body: { name: 'wakes the poll' } });
    const answer = await polled;
    expect(answer.json.data.map((e: Event) => e.type)).toEqual(['project.created']);
    expect(Date.now() - changedAt).toBeLessThan(1000);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('keeps waiting through events its filter leaves out', async () => {
    const cursor = await endCursor();
    const polled = feed(`?cursor=${cursor}&wait=20&type=project.deleted`);
    const { data } = await api
      .client(key)
      .POST('/v1/projects', { body: { name: 'created, then deleted' } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await api
      .client(key)
      .DELETE('/v1/projects/{project_id}', { params: { path: { project_id: data!.project_id } } });
    expect((await polled).json.data.map((e: Event) => e.type)).toEqual(['project.deleted']);
  });

  it('holds no database connection while 100 requests wait', async () => {
    const cursor = await endCursor();
    const pool = (
      api.service.knex.client as { pool: { numUsed(): number; numPendingAcquires(): number } }
    ).pool;
    const polls = Array.from({ length: 100 }, () => feed(`?cursor=${cursor}&wait=3`));
    // Time for all 100 to have made their first read (on a loaded machine, more than half a second), well within their 3 s.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // Held by the waiting requests, the pool (10) would be full with 90 waiting for it; only the
    // background parts' own statements may be seen using a connection, one each at most: the
    // watcher's, the numbering's, the webhook deliveries' and the clean-up's.
    const used: number[] = [];
    for (let i = 0; i < 10; i++) {
      used.push(pool.numUsed() + pool.numPendingAcquires());
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(Math.max(...used)).toBeLessThanOrEqual(4);
    const started = Date.now();
    expect((await api.client(key).GET('/v1/projects', {})).response.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1000);
    const answers = await Promise.all(polls);
    expect(answers.every((a) => a.status === 200 && a.json.data.length === 0)).toBe(true);
  });
});

describe('retention', () => {
  it('removes events older than EVENT_RETENTION_DAYS in the background; a cursor before them is 410', async () => {
    const kept = await startTestService({
      config: { cleanupIntervalSeconds: 0.2, eventRetentionDays: 1 },
    });
    try {
      const apiKey = await kept.createKey('acme');
      for (const name of ['old 1', 'old 2', 'new 3'])
        await kept.client(apiKey).POST('/v1/projects', { body: { name } });
      const start = (await kept.send('GET', '/v1/events?limit=1', { key: apiKey })).json
        .next_cursor;
      const twoDaysAgo = toDbTimestamp(new Date(Date.now() - 2 * 86_400_000).toISOString());
      const deadline = Date.now() + 5000;
      while (
        (await kept.service.knex('events').modify(awaitingNumber).count({ n: '*' }))[0].n != 0 &&
        Date.now() < deadline
      )
        await new Promise((r) => setTimeout(r, 50));
      await kept.service
        .knex('events')
        .whereIn('sequence', [1, 2])
        .update({ created_at: twoDaysAgo });
      while (
        Number((await kept.service.knex('events').count({ n: '*' }))[0].n) > 1 &&
        Date.now() < deadline
      )
        await new Promise((r) => setTimeout(r, 50));

      const fromStart = await kept.send('GET', '/v1/events', { key: apiKey });
      expect(fromStart.json.data.map((e: Event) => e.sequence)).toEqual([3]);
      const expired = await kept.send('GET', `/v1/events?cursor=${start}`, { key: apiKey });
      expect(expired.status).toBe(410);
      expect(expired.json.type).toBe('/problems/cursor-expired');
      expect(expired.json.detail).toMatch(/no longer kept/);
      expect(expired.json.latest_cursor).toBe(
        (await kept.send('GET', '/v1/events?from=latest', { key: apiKey })).json.next_cursor,
      );
    } finally {
      await kept.stop();
    }
  });
});
