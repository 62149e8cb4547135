/**
 * The client kit's search and bulk changes (version 2026-12-15) against the real service:
 * `tasks.search` walks every matching task page after page; `bulkUpdate` and `bulkDelete` send
 * `dry_run` and an Idempotency-Key, and one whose answer was lost is retried with that key and
 * changes once; a search whose answer was lost is retried as a read. The README's planning example
 * is the one shipped in examples/ and run here. A client in 2026-11-28 has none of these methods,
 * in its type or at run time, and a misspelt filter does not compile: tsc names the place.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  createClient,
  type Task,
  type TaskFilter,
  type TaskTrackerClient,
  type TypedEvent,
} from '@task-tracker/client';
import { startOverdueWork } from '../../clients/typescript/examples/planning';
import { projectRoot } from '../../src/paths';
import { startAnswerLosingProxy, type AnswerLosingProxy } from '../support/answer-losing-proxy';
import { startTestService, type TestService } from '../support/test-service';

type TaskCreate = Parameters<TaskTrackerClient<'2026-12-15'>['tasks']['create']>[0];

let api: TestService;
let proxy: AnswerLosingProxy;
const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-kit-planning-'));

beforeAll(async () => {
  api = await startTestService();
  proxy = await startAnswerLosingProxy(api.baseUrl);
});
afterAll(async () => {
  await proxy.stop();
  await api.stop();
  fs.rmSync(folder, { recursive: true, force: true });
});
afterEach(() => {
  proxy.interfere(() => undefined);
  jest.restoreAllMocks();
});

/** A kit in 2026-12-15 of a tenant of its own, through the proxy; what it sent, in `sent`. */
async function newestKit(tenant: string, sent: Request[] = []) {
  return createClient({
    baseUrl: proxy.url,
    apiKey: await api.createKey(tenant),
    apiVersion: '2026-12-15',
    retry: { baseDelayMs: 20, maxDelayMs: 100 },
    fetch: (request) => {
      sent.push(request.clone());
      return fetch(request);
    },
  });
}

const day = (offset: number) =>
  new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

async function tasksIn(
  tt: TaskTrackerClient<'2026-12-15'>,
  fields: Array<
    Omit<TaskCreate, 'project_id'> & { project?: number; status?: Task<'2026-12-15'>['status'] }
  >,
): Promise<Task<'2026-12-15'>[]> {
  const projects = [
    await tt.projects.create({ name: 'first' }),
    await tt.projects.create({ name: 'second' }),
  ];
  const made: Task<'2026-12-15'>[] = [];
  for (const { project = 0, status, ...rest } of fields) {
    let task = await tt.tasks.create({ ...rest, project_id: projects[project].project_id });
    if (status !== undefined && status !== 'pending')
      task = await tt.tasks.update(task.task_id, { status });
    made.push(task);
  }
  return made;
}

describe("the README's planning example", () => {
  const example = fs.readFileSync(
    path.join(projectRoot, 'clients', 'typescript', 'examples', 'planning.ts'),
    'utf8',
  );

  it.each([['clients/typescript/README.md'], ['README.md']])('%s shows it whole', (readme) => {
    expect(fs.readFileSync(path.join(projectRoot, readme), 'utf8')).toContain(
      '```ts\n' + example + '```',
    );
  });

  it("moves one assignee's overdue open tasks of high priority or above to in_progress, after a dry run", async () => {
    const tt = await newestKit('planning-example');
    const ana = 'ana@example.com';
    const [late, started, upcoming, minor, others, closed, elsewhere] = await tasksIn(tt, [
      { title: 'late', assignee: ana, priority: 'urgent', due_on: day(-1) },
      { title: 'started', assignee: ana, priority: 'high', due_on: day(-3), status: 'in_progress' },
      { title: 'upcoming', assignee: ana, priority: 'high', due_on: day(1) },
      { title: 'minor', assignee: ana, priority: 'medium', due_on: day(-1) },
      { title: 'others', assignee: 'ben@example.com', priority: 'urgent', due_on: day(-1) },
      { title: 'closed', assignee: ana, priority: 'urgent', due_on: day(-1), status: 'done' },
      { title: 'elsewhere', assignee: ana, priority: 'high', due_on: day(-2), project: 1 },
    ]);
    const printed: string[] = [];
    jest.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line));

    const result = await startOverdueWork(tt, ana);
    expect(printed).toEqual([
      `${day(-1)} urgent pending late`,
      `${day(-3)} high in_progress started`,
      `${day(-2)} high pending elsewhere`,
      '3 overdue, 2 to start',
    ]);
    expect(result).toEqual({
      matched: 3,
      changed: 2,
      task_ids: [late.task_id, elsewhere.task_id],
      dry_run: false,
    });
    const statuses = async () =>
      Object.fromEntries(
        await Promise.all(
          [late, started, upcoming, minor, others, closed, elsewhere].map(
            async (task) => [task.title, (await tt.tasks.get(task.task_id)).status] as const,
          ),
        ),
      );
    expect(await statuses()).toEqual({
      late: 'in_progress',
      started: 'in_progress',
      upcoming: 'pending',
      minor: 'pending',
      others: 'pending',
      closed: 'done',
      elsewhere: 'in_progress',
    });

    // Run again, the dry run finds nothing to start, and nothing is sent but it.
    printed.length = 0;
    expect(await startOverdueWork(tt, ana)).toEqual({
      matched: 3,
      changed: 0,
      task_ids: [],
      dry_run: true,
    });
    expect(printed.at(-1)).toBe('3 overdue, 0 to start');
  });
});

it('searches every matching task, page after page, in the order asked for', async () => {
  const tt = await newestKit('planning-search');
  const made = await tasksIn(
    tt,
    Array.from({ length: 7 }, (_, i) => ({
      title: `task ${i}`,
      labels: i % 3 === 0 ? ['Ops'] : ['web'],
      project: i % 2,
    })),
  );
  const filter: TaskFilter = { labels: { has_any: ['ops', 'WEB'] } };
  const found: string[] = [];
  for await (const task of tt.tasks.search(filter, { sort: '-created_at', limit: 2 }))
    found.push(task.title);
  expect(found).toEqual(made.map((task) => task.title).reverse());
  const pages: number[] = [];
  for await (const page of tt.tasks.search({ labels: { has: 'ops' } }, { limit: 2 }).pages())
    pages.push(page.data.length);
  expect(pages).toEqual([2, 1]);
  expect(await tt.tasks.search({ not: { labels: { has: 'web' } } }).toArray({ max: 10 })).toEqual(
    [0, 3, 6].map((i) => expect.objectContaining({ task_id: made[i].task_id })),
  );
});

it('retries a search whose answer was lost, as a read', async () => {
  const tt = await newestKit('planning-search-lost');
  const [task] = await tasksIn(tt, [{ title: 'findable words' }]);
  let lost = 0;
  proxy.interfere((request) =>
    request.path === '/v1/tasks/search' && lost++ < 2 ? 'lose' : undefined,
  );
  const found = await tt.tasks.search({ text: 'findable' }).toArray({ max: 10 });
  expect(found.map((each) => each.task_id)).toEqual([task.task_id]);
  expect(lost).toBe(3);
});

it('sends dry_run and an Idempotency-Key with each bulk change, by task_ids or by filter', async () => {
  const sent: Request[] = [];
  const tt = await newestKit('planning-bulk', sent);
  const [a, b, c] = await tasksIn(tt, [
    { title: 'a', labels: ['sprint'] },
    { title: 'b', labels: ['sprint'], priority: 'high' },
    { title: 'c' },
  ]);
  sent.length = 0;
  const preview = await tt.tasks.bulkUpdate({
    task_ids: [a.task_id, b.task_id],
    changes: { priority: 'high', labels_add: ['Q1'] },
    dryRun: true,
  });
  expect(preview).toEqual({
    matched: 2,
    changed: 2,
    task_ids: [a.task_id, b.task_id],
    dry_run: true,
  });
  expect((await tt.tasks.get(a.task_id)).labels).toEqual(['sprint']);
  const changed = await tt.tasks.bulkUpdate(
    { filter: { labels: { has: 'sprint' } }, changes: { priority: 'high' } },
    { idempotencyKey: 'bulk-key-1' },
  );
  expect(changed).toEqual({ matched: 2, changed: 1, task_ids: [a.task_id], dry_run: false });
  const deleted = await tt.tasks.bulkDelete({ task_ids: [b.task_id, c.task_id] });
  expect(deleted).toEqual({
    matched: 2,
    changed: 2,
    task_ids: [b.task_id, c.task_id],
    dry_run: false,
  });
  expect(await tt.tasks.get(c.task_id).catch((error: { status: number }) => error.status)).toBe(
    404,
  );

  const posts = sent.filter((request) => request.method === 'POST');
  const bodies = await Promise.all(
    posts.map(async (request) => [request, await request.json()] as const),
  );
  expect(
    bodies.map(([request, body]) => [
      new URL(request.url).pathname,
      request.headers.get('api-version'),
      body,
    ]),
  ).toEqual([
    [
      '/v1/tasks/bulk-update',
      '2026-12-15',
      {
        task_ids: [a.task_id, b.task_id],
        changes: { priority: 'high', labels_add: ['Q1'] },
        dry_run: true,
      },
    ],
    [
      '/v1/tasks/bulk-update',
      '2026-12-15',
      { filter: { labels: { has: 'sprint' } }, changes: { priority: 'high' }, dry_run: false },
    ],
    ['/v1/tasks/bulk-delete', '2026-12-15', { task_ids: [b.task_id, c.task_id], dry_run: false }],
  ]);
  const keys = posts.map((request) => request.headers.get('idempotency-key'));
  expect(keys[1]).toBe('bulk-key-1');
  expect(new Set(keys).size).toBe(3);
  for (const key of keys) expect(key).toMatch(/^[\w-]{8,}$/);
});

it('retries a bulk change whose answer was lost with its one Idempotency-Key: changed once, the first answer', async () => {
  const tt = await newestKit('planning-bulk-lost');
  const [a, b] = await tasksIn(tt, [{ title: 'a' }, { title: 'b' }]);
  const { next_cursor: before } = await tt.events.page({ from: 'latest' });
  const seenBefore = proxy.seen.length;
  let lost = 0;
  proxy.interfere((request) =>
    request.path === '/v1/tasks/bulk-update' && lost++ < 1 ? 'lose' : undefined,
  );
  const result = await tt.tasks.bulkUpdate({
    task_ids: [a.task_id, b.task_id],
    changes: { status: 'done' },
  });
  expect(result).toEqual({
    matched: 2,
    changed: 2,
    task_ids: [a.task_id, b.task_id],
    dry_run: false,
  });
  const attempts = proxy.seen
    .slice(seenBefore)
    .filter((request) => request.path === '/v1/tasks/bulk-update');
  expect(attempts).toHaveLength(2);
  expect(attempts[0].headers['idempotency-key']).toBe(attempts[1].headers['idempotency-key']);
  // The changes' events, once numbered (the projects' and tasks' creations may be numbered
  // after `before` was read): two, one per task, and no more.
  const events: TypedEvent<'2026-12-15'>[] = [];
  for (let cursor = before; ;) {
    const changes = () => events.filter((event) => event.type === 'task.updated').length;
    const page = await tt.events.page({ cursor, limit: 100, wait: changes() < 2 ? 5 : 0 });
    events.push(...page.data.filter((event) => !event.type.endsWith('.created')));
    cursor = page.next_cursor;
    if (changes() >= 2 && page.data.length === 0) break;
  }
  expect(events.map((event) => [event.type, event.data.object])).toEqual([
    ['task.updated', expect.objectContaining({ task_id: a.task_id, status: 'done' })],
    ['task.updated', expect.objectContaining({ task_id: b.task_id, status: 'done' })],
  ]);
});

it('has no search or bulk changes in a client in 2026-11-28, in its type or at run time', async () => {
  const older = createClient({ baseUrl: proxy.url, apiKey: await api.createKey('planning-older') });
  // @ts-expect-error: 2026-11-28 has no search
  expect(older.tasks.search).toBeUndefined();
  // @ts-expect-error: nor bulk changes
  expect([older.tasks.bulkUpdate, older.tasks.bulkDelete]).toEqual([undefined, undefined]);
  expect(Object.keys(older.tasks).sort()).toEqual(['create', 'delete', 'get', 'list', 'update']);
  const explicit = createClient({
    baseUrl: proxy.url,
    apiKey: 'tt_x',
    apiVersion: '2026-11-28',
  });
  expect('search' in explicit.tasks).toBe(false);
});

describe('compiled by tsc', () => {
  const program = `import { createClient, type TaskFilter } from '@task-tracker/client';
const tt = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'tt_x', apiVersion: '2026-12-15' });
export const overdue: TaskFilter = {
  all: [
    { priority: { gte: 'high' } },
    { due_on: { lt: '2026-12-01' } },
    { status: { in: ['pending', 'in_progress'] } },
  ],
};
export const found = tt.tasks.search(overdue, { sort: '-created_at' });
export const started = tt.tasks.bulkUpdate({ filter: overdue, changes: { status: 'in_progress' }, dryRun: true });
export const older = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'tt_x' }).tasks;
`;
  const compile = (name: string, text: string): string => {
    fs.writeFileSync(path.join(folder, name), text);
    const config = path.join(folder, `tsconfig.${name}.json`);
    fs.writeFileSync(
      config,
      JSON.stringify({
        compilerOptions: {
          module: 'node16',
          moduleResolution: 'node16',
          target: 'ES2022',
          lib: ['ES2022', 'DOM'],
          types: [],
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          paths: {
            '@task-tracker/client': [
              path.join(projectRoot, 'clients', 'typescript', 'src', 'index.ts'),
            ],
          },
        },
        files: [name],
      }),
    );
    try {
      return execFileSync(path.join(projectRoot, 'node_modules', '.bin', 'tsc'), ['-p', config], {
        cwd: folder,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      return (error as { stdout: string }).stdout;
    }
  };
  /** Where `text` is in `source`: `(line,column)` as tsc prints it. */
  const place = (source: string, text: string) => {
    const before = source.slice(0, source.indexOf(text)).split('\n');
    return `(${before.length},${before.at(-1)!.length + 1})`;
  };

  it('takes a filter and the calls of a client in 2026-12-15', () => {
    expect(compile('sound.ts', program)).toBe('');
  });

  it('names the place of a misspelt operator, a misspelt field, and a call 2026-11-28 lacks', () => {
    const faulty = program
      .replace("{ priority: { gte: 'high' } }", "{ priority: { gtee: 'high' } }")
      .replace("{ status: { in: ['pending', 'in_progress'] } }", "{ stauts: { in: ['pending'] } }")
      .replace('.tasks;\n', '.tasks.search(overdue);\n');
    const printed = compile('faulty.ts', faulty);
    expect(printed).toMatch(
      new RegExp(
        `^faulty\\.ts${escape(place(faulty, 'gtee:'))}: error TS\\d+: Object literal may only specify known properties, but 'gtee' does not exist`,
        'm',
      ),
    );
    expect(printed).toMatch(
      new RegExp(
        `^faulty\\.ts${escape(place(faulty, 'stauts'))}: error TS\\d+: .*'stauts' does not exist in type 'TaskFilter`,
        'm',
      ),
    );
    expect(printed).toMatch(
      new RegExp(
        `^faulty\\.ts${escape(place(faulty, 'search(overdue);'))}: error TS2339: Property 'search' does not exist`,
        'm',
      ),
    );
    expect(printed.match(/^faulty\.ts\(/gm)).toHaveLength(3);
  });
});

const escape = (text: string) => text.replace(/[()]/g, '\\$&');
