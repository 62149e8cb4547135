/**
 * The client kit's feed follower against the real service: every event once, in sequence order,
 * while writers run; a consumer stopped at any point and resumed from its stored cursor misses
 * nothing and repeats nothing; filters; a long poll that waits rather than spins.
 */
import {
  createClient,
  CursorExpiredError,
  cursorAfter,
  type FollowedEvent,
  type TaskTrackerClient,
} from '../../clients/typescript/src';
import { startTestService, type TestService } from '../support/test-service';
import { encodeEventCursor } from '../../src/events/event-cursor';

let api: TestService;
let client: TaskTrackerClient;

beforeAll(async () => {
  api = await startTestService();
  client = createClient({ baseUrl: api.baseUrl, apiKey: await api.createKey('follow') });
});
afterAll(() => api.stop());

/** Takes events from the follower until `count` have come (or `timeoutMs` passes), then stops it. */
async function take(
  options: Parameters<TaskTrackerClient['events']['follow']>[0],
  count: number,
  timeoutMs = 20_000,
): Promise<FollowedEvent[]> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), timeoutMs);
  const taken: FollowedEvent[] = [];
  try {
    for await (const event of client.events.follow({
      waitSeconds: 2,
      ...options,
      signal: stop.signal,
    })) {
      taken.push(event);
      if (taken.length >= count) break;
    }
  } finally {
    clearTimeout(timer);
  }
  return taken;
}

it('yields every event once, in sequence order, while writers run, each with the cursor after it', async () => {
  const project = await client.projects.create({ name: 'followed' });
  const writers = Array.from({ length: 100 }, (_, i) =>
    client.tasks.create({ project_id: project.project_id, title: `t${i}` }),
  );
  const followed = take({ from: 'oldest' }, 101);
  await Promise.all(writers);
  const events = await followed;
  expect(events.map((event) => event.sequence)).toEqual(
    Array.from({ length: 101 }, (_, i) => i + 1),
  );
  for (const event of events) expect(event.cursor).toBe(cursorAfter(event.sequence));
  // The kit's cursor is the service's: the page after the last event starts where the kit says.
  const page = await client.events.page({ cursor: events[49].cursor, limit: 1 });
  expect(page.data[0].sequence).toBe(51);
});

it('writes a cursor as the service does, for numbers of every length', () => {
  const random = Array.from({ length: 20_000 }, () =>
    Math.floor(Math.random() * 10 ** (1 + Math.floor(Math.random() * 15))),
  );
  const sequences = [
    ...Array.from({ length: 5000 }, (_, i) => i),
    ...random,
    2 ** 31 - 1,
    Number.MAX_SAFE_INTEGER,
  ];
  const differing = sequences.filter((n) => cursorAfter(n) !== encodeEventCursor(n));
  expect(differing).toEqual([]);
});

it('resumes from a stored cursor, after being stopped anywhere, without missing or repeating', async () => {
  const all = await take({ from: 'oldest' }, 101);
  const stored: string[] = [];
  let resumed: FollowedEvent[] = [];
  // A consumer that stops after 17 events each time, storing each cursor once it has handled the event.
  let from = 'oldest';
  while (resumed.length < all.length) {
    const batch = await take({ from }, Math.min(17, all.length - resumed.length));
    resumed = resumed.concat(batch);
    for (const event of batch) stored.push(event.cursor);
    from = stored[stored.length - 1];
  }
  expect(resumed.map((event) => event.event_id)).toEqual(all.map((event) => event.event_id));
});

it('waits for the next event rather than ending at the head, and narrows by type and project', async () => {
  const from = (await client.events.page({ limit: 200 })).next_cursor;
  const project = await client.projects.create({ name: 'narrowed' });
  const waiting = take({ from, types: ['task.updated'], projectId: project.project_id }, 1);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const task = await client.tasks.create({ project_id: project.project_id, title: 'watched' });
  await client.tasks.update(task.task_id, { status: 'done' });
  const [event] = await waiting;
  expect(event.type).toBe('task.updated');
  if (event.type === 'task.updated') {
    // Typed by its type: a Task, and the fields that changed with their old values.
    expect(event.data.object.status).toBe('done');
    expect(event.data.previous.status).toBe('pending');
  }
});

it("follows from 'latest': only what happens from then on", async () => {
  const project = await client.projects.create({ name: 'from now on' });
  // Its event numbered first: 'latest' is the position after the newest numbered event.
  while ((await client.events.page({ project_id: project.project_id })).data.length === 0)
    await new Promise((resolve) => setTimeout(resolve, 50));
  const following = take({ from: 'latest' }, 1);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const task = await client.tasks.create({
    project_id: project.project_id,
    title: 'the first new one',
  });
  const [event] = await following;
  expect(event.type).toBe('task.created');
  if (event.type === 'task.created') expect(event.data.object.task_id).toBe(task.task_id);
});

it('throws CursorExpiredError with the latest cursor for a cursor this feed never gave', async () => {
  const head = (await client.events.page({ from: 'latest' })).next_cursor;
  const error = await take({ from: cursorAfter(99_999_999) }, 1, 5000).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(CursorExpiredError);
  expect((error as CursorExpiredError).latestCursor).toBe(head);
  expect((error as CursorExpiredError).problem.status).toBe(410);
});

it('gives its starting position before the first event: stopped before one, it resumes there and misses nothing', async () => {
  const project = await client.projects.create({ name: 'position first' });
  let stored: string | undefined;
  const stop = new AbortController();
  const started = new Promise<void>((resolve) => {
    void (async () => {
      for await (const event of client.events.follow({
        from: 'latest',
        projectId: project.project_id,
        types: ['task.created'],
        waitSeconds: 1,
        signal: stop.signal,
        onStart: (cursor) => {
          stored = cursor;
          resolve();
        },
      }))
        throw new Error(`no event was expected, got #${event.sequence}`);
    })();
  });
  await started;
  stop.abort();
  // Changes made while no follower runs are where the stored position resumes.
  const task = await client.tasks.create({ project_id: project.project_id, title: 'meanwhile' });
  const resumed = await take(
    { from: stored, projectId: project.project_id, types: ['task.created'] },
    1,
  );
  expect(
    resumed.map((event) => [event.type, (event.data.object as { task_id?: string }).task_id]),
  ).toEqual([['task.created', task.task_id]]);
  // From a stored cursor, the start is that cursor.
  let again: string | undefined;
  await take(
    { from: stored, projectId: project.project_id, onStart: (cursor) => void (again = cursor) },
    1,
  );
  expect(again).toBe(stored);
});
