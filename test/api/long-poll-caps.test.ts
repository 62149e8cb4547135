/**
 * Long polls are fenced and cheap: a key holds at most LONG_POLLS_PER_KEY and a tenant
 * LONG_POLLS_PER_TENANT (past either, a poll answers at once, as wait=0), and a tenant's waiting
 * polls are answered from one read of its new events, each page exactly what its own read gives.
 */
import http from 'node:http';
import type { components } from '../../generated/api';
import { capturedLog } from '../support/captured-log';
import { scrapeMetrics } from '../support/metrics-scrape';
import { startTestService, type RawResponse, type TestService } from '../support/test-service';

type Event = components['schemas']['Event'];

let api: TestService;

beforeAll(async () => {
  api = await startTestService();
});
afterAll(() => api.stop());

const feed = (key: string, query = '', service = api) =>
  service.send('GET', `/v1/events${query}`, { key });
const endCursor = async (key: string, service = api): Promise<string> =>
  (await feed(key, '', service)).json.next_cursor;
const createProject = async (key: string, name: string, service = api) =>
  (await service.client(key).POST('/v1/projects', { body: { name } })).data!;

/** Polls, each recording whether it answered by the time it is looked at. */
function polls(key: string, query: string, count: number, service = api) {
  return Array.from({ length: count }, () => {
    const poll = { answer: undefined as RawResponse | undefined, done: feed(key, query, service) };
    void poll.done.then((answer) => (poll.answer = answer));
    return poll;
  });
}

it('holds at most LONG_POLLS_PER_KEY of a key and LONG_POLLS_PER_TENANT of a tenant; the rest answer at once, as wait=0', async () => {
  const capped = await startTestService({
    config: { longPollsPerKey: 10, longPollsPerTenant: 15 },
  });
  try {
    await capsHold(capped);
  } finally {
    await capped.stop();
  }
});

async function capsHold(capped: TestService): Promise<void> {
  const [a, b, other] = [
    await capped.createKey('capped'),
    await capped.createKey('capped'),
    await capped.createKey('neighbour'),
  ];
  const cursor = await endCursor(a, capped);
  const otherCursor = await endCursor(other, capped);
  const sent = [
    ...polls(a, `?cursor=${cursor}&wait=15`, 11, capped),
    ...polls(b, `?cursor=${cursor}&wait=15`, 6, capped),
  ];
  const neighbour = polls(other, `?cursor=${otherCursor}&wait=15`, 1, capped);

  // Of 17, the key's cap leaves one of a's 11 out and the tenant's cap one more, whichever key it falls on.
  const deadline = Date.now() + 10_000;
  while (sent.filter((poll) => poll.answer).length < 2 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
  await new Promise((resolve) => setTimeout(resolve, 500));
  const atOnce = sent.filter((poll) => poll.answer);
  expect(atOnce).toHaveLength(2);
  for (const poll of atOnce)
    expect(poll.answer!.json).toEqual({ data: [], next_cursor: cursor, has_more: false });
  expect(sent.slice(0, 11).filter((poll) => !poll.answer).length).toBeLessThanOrEqual(10);
  // Another tenant's poll is held all the same.
  expect(neighbour[0].answer).toBeUndefined();

  await createProject(a, 'wakes the 15', capped);
  const held = await Promise.all(
    sent.filter((poll) => !atOnce.includes(poll)).map((poll) => poll.done),
  );
  expect(held).toHaveLength(15);
  for (const answer of held)
    expect(answer.json.data.map((event: Event) => event.type)).toEqual(['project.created']);
  expect(neighbour[0].answer).toBeUndefined();
  await createProject(other, 'wakes the neighbour', capped);
  expect((await neighbour[0].done).json.data).toHaveLength(1);

  // The places are given back: the key holds polls again.
  const again = polls(a, `?cursor=${held[0].json.next_cursor}&wait=15`, 10, capped);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  expect(again.filter((poll) => poll.answer)).toHaveLength(0);
  await createProject(b, 'wakes them again', capped);
  expect(
    (await Promise.all(again.map((poll) => poll.done))).every(
      (answer) => answer.json.data.length === 1,
    ),
  ).toBe(true);
}

it("answers a tenant's waiting polls from one read of its events per wake-up, not one per poll", async () => {
  const keys: string[] = [];
  for (let i = 0; i < 10; i++) keys.push(await api.createKey('busy'));
  let cursor = await endCursor(keys[0]);
  const feedReads: string[] = [];
  // The feed's reads of events are the statements that read request_id (the page's and the shared one).
  const count = (query: { sql: string }) => {
    if (/^select\b/i.test(query.sql) && /request_id/.test(query.sql)) feedReads.push(query.sql);
  };
  // A poll that waits a moment lets the watcher learn the tenant's last sequence, as a consumer's earlier polls would.
  await feed(keys[0], `?cursor=${cursor}&wait=1`);
  try {
    const rounds = 3;
    for (let round = 0; round < rounds; round++) {
      // Counted from the second round: on a loaded machine the watcher may not know the tenant yet
      // in the first (its polls then read on their own); by the second it has woken them all.
      if (round === 1) api.service.knex.on('query', count);
      const waiting = keys.flatMap((key) => polls(key, `?cursor=${cursor}&wait=15`, 10));
      // A poll from the last position the watcher knows starts waiting without a read.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(waiting.filter((poll) => poll.answer)).toHaveLength(0);
      await createProject(keys[round], `round ${round}`);
      const answers = await Promise.all(waiting.map((poll) => poll.done));
      expect(
        answers.every(
          (answer) =>
            answer.json.data.length === 1 &&
            answer.json.data[0].data.object.name === `round ${round}`,
        ),
      ).toBe(true);
      cursor = answers[0].json.next_cursor;
    }
    // One shared read a wake-up (another for a poll that arrives while it runs), none for the polls themselves: each of the 100 a round read on its own twice.
    expect(feedReads.length).toBeLessThanOrEqual((rounds - 1) * 3);
  } finally {
    api.service.knex.off('query', count);
  }
});

it('answers each waiting poll, whatever its filters and limit, with exactly the page its own read gives', async () => {
  const key = await api.createKey('filtered');
  const { tenant_id: tenantId } = await api.service
    .knex('tenants')
    .where('name', 'filtered')
    .first();
  const [kept, other] = [await createProject(key, 'kept'), await createProject(key, 'other')];
  const tasks: Array<components['schemas']['Task']> = [];
  for (const [project, title] of [
    [kept, 'one'],
    [other, 'two'],
    [kept, 'three'],
    [other, 'four'],
  ] as const) {
    tasks.push(
      (await api.client(key).POST('/v1/tasks', { body: { project_id: project.project_id, title } }))
        .data!,
    );
  }
  // Numbering follows the commits: start from after all six creates.
  let cursor = await endCursor(key);
  for (
    const deadline = Date.now() + 5000;
    (await feed(key, '?limit=200')).json.data.length < 6 && Date.now() < deadline;
  )
    await new Promise((resolve) => setTimeout(resolve, 50));
  cursor = await endCursor(key);
  const queries = [
    '',
    '&limit=1',
    '&limit=3',
    '&type=task.updated',
    '&type=project.updated&type=task.updated',
    `&project_id=${kept.project_id}`,
    `&project_id=${other.project_id}&limit=1`,
    '&type=task.deleted',
  ];
  const waiting = queries.map((query) => polls(key, `?cursor=${cursor}&wait=4${query}`, 1)[0]);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  // Six events committed together are numbered together: one wake-up, which the filters and limits cut differently.
  await api.repositories.inTransaction('shared-read-test', async (write) => {
    for (const task of tasks)
      await api.repositories.eventLog.record(write, {
        tenantId,
        type: 'task.updated',
        projectId: task.project_id,
        object: task,
        previous: { title: 'before' },
      });
    for (const project of [kept, other])
      await api.repositories.eventLog.record(write, {
        tenantId,
        type: 'project.updated',
        projectId: project.project_id,
        object: project,
        previous: { name: 'before' },
      });
  });
  const answers = await Promise.all(waiting.map((poll) => poll.done));
  expect(answers[0].json.data).toHaveLength(6);
  for (const [i, query] of queries.entries()) {
    // The one whose filter matched nothing waited on to its time, from the last position.
    expect([query, answers[i].json]).toEqual([
      query,
      (await feed(key, `?cursor=${cursor}${query}`)).json,
    ]);
  }
});

describe('a poll that ends early', () => {
  let capped: TestService;
  const log = capturedLog();
  beforeAll(async () => {
    capped = await startTestService({
      config: { longPollsPerKey: 10, logLevel: 'info' },
      logDestination: log.stream,
    });
  });
  afterAll(() => capped.stop());

  /** Long polls sent straight to the service, that their clients give up on once all are waiting. */
  const abandoned = async (key: string, query: string, count: number) => {
    const requests = Array.from({ length: count }, () => {
      const request = http.get(`${capped.service.url}/v1/events${query}`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      request.on('error', () => {});
      return request;
    });
    const waiting = async () =>
      (await scrapeMetrics(capped.service.url)).value('events_long_polls_waiting') ?? 0;
    const deadline = Date.now() + 10_000;
    while ((await waiting()) < count && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    for (const request of requests) request.destroy();
  };

  it('gives its place back as soon as its client leaves, and is logged and counted as 499', async () => {
    const key = await capped.createKey('leaving');
    const cursor = await endCursor(key, capped);
    await abandoned(key, `?cursor=${cursor}&wait=20`, 10);
    const left = () =>
      log.lines.filter((line) => line.operation === 'listEvents' && line.status === 499);
    const deadline = Date.now() + 5000;
    while (left().length < 10 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(left()).toHaveLength(10);
    // The key's ten places are free again: its next poll waits, as it may.
    const started = performance.now();
    const waited = await feed(key, `?cursor=${cursor}&wait=2`, capped);
    expect(waited.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThan(1500);
    const scraped = await scrapeMetrics(capped.service.url);
    expect(scraped.value('http_requests_total{operation="listEvents",status="499"}')).toBe(10);
  });

  it('answers 401 when its key was revoked while it waited', async () => {
    const key = await capped.createKey('revoked-while-waiting');
    const cursor = await endCursor(key, capped);
    const poll = feed(key, `?cursor=${cursor}&wait=2`, capped);
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const listed of await capped.repositories.apiKeys.list())
      if (listed.tenant === 'revoked-while-waiting')
        await capped.repositories.apiKeys.revoke(listed.key_id);
    const answer = await poll;
    expect([answer.status, answer.json.type, answer.json.detail]).toEqual([
      401,
      '/problems/unauthenticated',
      'The API key was revoked or expired while this request waited.',
    ]);
    expect(answer.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });
});
