/**
 * POST /v1/tasks/search, version 2026-12-15 (issue 46, item 3; contract-decisions "Planning with
 * tasks"): a TaskFilter over the tenant's tasks across its projects, each operator through the
 * API, `text` by whole words and case folds, keyset paging that holds while tasks change, a read
 * a read-only key may make, never another tenant's tasks, and every fault of a filter's shape a
 * 400 pointing to its place. 2026-11-28 has no search. Every answer is checked against the
 * document.
 */
import type { components } from '../../generated/api';
import { startTestService, type TestService } from '../support/test-service';

type Task = components['schemas']['Task'];
type TaskFilter = components['schemas']['TaskFilter'];
type TaskCreate = Omit<components['schemas']['TaskCreate'], 'project_id'>;

let api: TestService;
let key: string;
let otherKey: string;
let projects: string[];
/** The fixture's tasks by title. */
const tasks = new Map<string, Task>();

async function call(
  method: string,
  path: string,
  body: unknown,
  options: { key?: string; version?: string } = {},
) {
  return api.send(method, path, {
    key: options.key ?? key,
    headers: { 'Content-Type': 'application/json', 'Api-Version': options.version ?? '2026-12-15' },
    body: JSON.stringify(body),
  });
}

const search = (body: object, options?: { key?: string; version?: string }) =>
  call('POST', '/v1/tasks/search', body, options);

async function create(projectId: string, task: TaskCreate, as = key): Promise<Task> {
  const answer = await call('POST', '/v1/tasks', { project_id: projectId, ...task }, { key: as });
  expect(answer.status).toBe(201);
  return answer.json;
}

/** The titles of every task the filter finds, walking every page, in the order found. */
async function found(filter: TaskFilter, options: { key?: string; limit?: number } = {}) {
  const titles: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await search({ filter, limit: options.limit ?? 200, cursor }, options);
    expect([JSON.stringify(filter), page.status]).toEqual([JSON.stringify(filter), 200]);
    titles.push(...page.json.data.map((task: Task) => task.title));
    cursor = page.json.next_cursor ?? undefined;
  } while (cursor);
  return titles;
}

const sorted = (titles: string[]) => [...titles].sort();

beforeAll(async () => {
  api = await startTestService();
  key = await api.createKey('search');
  otherKey = await api.createKey('someone-else');
  projects = [];
  for (const name of ['one', 'two']) {
    const answer = await call('POST', '/v1/projects', { name });
    projects.push(answer.json.project_id);
  }
  const fixture: Array<[number, TaskCreate]> = [
    [
      0,
      {
        title: 'alpha',
        priority: 'urgent',
        due_on: '2026-12-01',
        labels: ['Ops', 'web'],
        assignee: 'ana',
      },
    ],
    [
      0,
      { title: 'beta', priority: 'high', due_on: '2026-12-15', labels: ['ops'], assignee: 'Ana' },
    ],
    [0, { title: 'gamma', priority: 'low', labels: ['Straße'], assignee: 'ana ' }],
    [1, { title: 'delta', priority: 'medium', due_on: '2027-01-10', labels: ['web', 'db'] }],
    [1, { title: 'epsilon', description: 'Fix the user_name column and the login' }],
  ];
  for (const [project, task] of fixture) {
    tasks.set(task.title, await create(projects[project], task));
  }
  const moved = await call('PATCH', `/v1/tasks/${tasks.get('beta')!.task_id}`, { status: 'done' });
  tasks.set('beta', moved.json);
  await call('PATCH', `/v1/tasks/${tasks.get('delta')!.task_id}`, { status: 'cancelled' });
  // Another tenant's tasks, alike in every way a filter could ask about.
  const theirs = (await call('POST', '/v1/projects', { name: 'theirs' }, { key: otherKey })).json;
  for (const [, task] of fixture) await create(theirs.project_id, task, otherKey);
});
afterAll(() => api.stop());

it("finds tasks by each operator, across the tenant's projects", async () => {
  const beta = tasks.get('beta')!;
  const cases: Array<[TaskFilter, string[]]> = [
    [{ project_id: { in: [projects[1]] } }, ['delta', 'epsilon']],
    [{ status: { in: ['done', 'cancelled'] } }, ['beta', 'delta']],
    [{ priority: { in: ['low', 'medium'] } }, ['delta', 'gamma']],
    [{ priority: { gte: 'high' } }, ['alpha', 'beta']],
    [{ priority: { lte: 'low' } }, ['epsilon', 'gamma']],
    [{ priority: { gte: 'low', lte: 'medium' } }, ['delta', 'gamma']],
    // Assignees compare as written: case and a trailing space make another name.
    [{ assignee: { eq: 'ana' } }, ['alpha']],
    [{ assignee: { in: ['Ana', 'ana '] } }, ['beta', 'gamma']],
    [{ assignee: { is_null: true } }, ['delta', 'epsilon']],
    [{ assignee: { is_null: false } }, ['alpha', 'beta', 'gamma']],
    // Labels compare by case fold (Straße is STRASSE).
    [{ labels: { has: 'OPS' } }, ['alpha', 'beta']],
    [{ labels: { has: 'STRASSE' } }, ['gamma']],
    [{ labels: { has_any: ['DB', 'strasse'] } }, ['delta', 'gamma']],
    [{ labels: { has_all: ['web', 'ops', 'WEB'] } }, ['alpha']],
    [{ labels: { has_none: ['ops', 'db'] } }, ['epsilon', 'gamma']],
    // A comparison never matches a task without a due date, nor does not reverse that.
    [{ due_on: { lt: '2026-12-15' } }, ['alpha']],
    [{ due_on: { lte: '2026-12-15' } }, ['alpha', 'beta']],
    [{ due_on: { gt: '2026-12-15' } }, ['delta']],
    [{ due_on: { gte: '2026-12-15', lt: '2027-01-10' } }, ['beta']],
    [{ due_on: { is_null: true } }, ['epsilon', 'gamma']],
    [{ not: { due_on: { lt: '2026-12-15' } } }, ['beta', 'delta', 'epsilon', 'gamma']],
    [{ created_at: { gte: tasks.get('gamma')!.created_at } }, ['delta', 'epsilon', 'gamma']],
    [{ created_at: { lt: tasks.get('beta')!.created_at } }, ['alpha']],
    [{ updated_at: { gte: beta.updated_at } }, ['beta', 'delta']],
    [{ updated_at: { lt: beta.updated_at } }, ['alpha', 'epsilon', 'gamma']],
    [{ all: [{ labels: { has: 'ops' } }, { not: { status: { in: ['done'] } } }] }, ['alpha']],
    [{ any: [{ priority: { in: ['urgent'] } }, { labels: { has: 'db' } }] }, ['alpha', 'delta']],
    [
      {
        any: [
          { all: [{ not: { assignee: { is_null: true } } }, { priority: { lte: 'low' } }] },
          { text: 'login' },
        ],
      },
      ['epsilon', 'gamma'],
    ],
  ];
  for (const [filter, titles] of cases)
    expect([filter, sorted(await found(filter))]).toEqual([filter, titles]);
});

it('finds text by whole words in the title or description, by case fold, stopwords and joined words included', async () => {
  const project = projects[0];
  await create(project, { title: 'The launch announcement', description: 'And then SOME more' });
  await create(project, { title: 'Launched', description: null });
  await create(project, { title: 'Straße fixes', description: 'größte Änderung 2026' });
  const cases: Array<[string, string[]]> = [
    ['launch', ['The launch announcement']],
    ['LAUNCH announcement', ['The launch announcement']],
    // Words in the title and the description together.
    ['launch some', ['The launch announcement']],
    // MariaDB's stopwords (the, and, then) are words like any other.
    ['the and then', ['The launch announcement']],
    ['launched', ['Launched']],
    ['strasse', ['Straße fixes']],
    ['GRÖSSTE änderung', ['Straße fixes']],
    ['2026', ['Straße fixes']],
    // A word joined by an underscore or a dash is two words.
    ['user', ['epsilon']],
    ['name column', ['epsilon']],
    ['launch missing', []],
  ];
  for (const [text, titles] of cases)
    expect([text, sorted(await found({ text }))]).toEqual([text, sorted(titles)]);
});

it('finds a task by its new words once its title or description changes, and no longer by the old', async () => {
  const task = await create(projects[1], {
    title: 'Original wording',
    description: 'unchanged body',
  });
  expect(await found({ text: 'original' })).toEqual(['Original wording']);
  await call('PATCH', `/v1/tasks/${task.task_id}`, { title: 'Reworded' });
  expect(await found({ text: 'original' })).toEqual([]);
  expect(await found({ text: 'reworded body' })).toEqual(['Reworded']);
  await call('PATCH', `/v1/tasks/${task.task_id}`, { description: null });
  expect(await found({ text: 'body' })).toEqual([]);
  await call('DELETE', `/v1/tasks/${task.task_id}`, undefined);
  expect(await found({ text: 'reworded' })).toEqual([]);
});

it('pages by keyset in created_at order (or the reverse), each task once while tasks are added and deleted', async () => {
  const project = (await call('POST', '/v1/projects', { name: 'paging' })).json.project_id;
  const made: Task[] = [];
  for (let i = 0; i < 7; i++)
    made.push(await create(project, { title: `page ${i}`, labels: ['paged'] }));
  const filter: TaskFilter = { labels: { has: 'paged' } };
  for (const sort of ['created_at', '-created_at'] as const) {
    const seen: string[] = [];
    let cursor: string | undefined;
    let turn = 0;
    do {
      const page = await search({ filter, sort, limit: 2, cursor });
      expect(page.status).toBe(200);
      expect(page.json.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.json.data.map((task: Task) => task.title));
      cursor = page.json.next_cursor ?? undefined;
      // Meanwhile a task that matches is added (after the last in created_at order), and one
      // not yet seen is deleted: a list that moves underneath.
      if (turn++ === 0) {
        made.push(await create(project, { title: `late ${sort}`, labels: ['paged'] }));
        const unseen = made.findIndex(
          (task) => !seen.includes(task.title) && !task.title.startsWith('late'),
        );
        const [gone] = made.splice(sort === 'created_at' ? unseen + 1 : unseen, 1);
        expect((await call('DELETE', `/v1/tasks/${gone.task_id}`, undefined)).status).toBe(204);
      }
    } while (cursor);
    const expected = made.map((task) => task.title);
    if (sort === 'created_at') expect(seen).toEqual(expected);
    else expect(seen).toEqual(expected.slice(0, -1).reverse());
  }
  // A cursor is for the sort it was made for.
  const first = await search({ filter, sort: '-created_at', limit: 1 });
  const wrong = await search({
    filter,
    sort: 'created_at',
    limit: 1,
    cursor: first.json.next_cursor,
  });
  expect(wrong.status).toBe(400);
  expect(wrong.json.type).toBe('/problems/invalid-cursor');
  // The default is created_at, 50 to a page.
  const all = await search({ filter });
  expect(all.json.data.map((task: Task) => task.title)).toEqual(made.map((task) => task.title));
});

it('sorts as the lists do, across projects: by due_on (undated last either way) and by priority, a page at a time', async () => {
  const sorting: string[] = [];
  for (const name of ['sorting one', 'sorting two'])
    sorting.push((await call('POST', '/v1/projects', { name })).json.project_id);
  const made: Array<[number, TaskCreate]> = [
    [0, { title: 'first undated', priority: 'low' }],
    [1, { title: 'late', priority: 'high', due_on: '2027-01-10' }],
    [0, { title: 'early', priority: 'urgent', due_on: '2026-12-01' }],
    [1, { title: 'second undated' }],
    [0, { title: 'middle', priority: 'medium', due_on: '2026-12-15' }],
  ];
  for (const [project, task] of made) await create(sorting[project], task);
  const walk = async (sort: string) => {
    const titles: string[] = [];
    let cursor: string | undefined;
    do {
      const filter: TaskFilter = { project_id: { in: sorting } };
      const page = await search({ filter, sort, limit: 1, cursor });
      expect([sort, page.status]).toEqual([sort, 200]);
      titles.push(...page.json.data.map((task: Task) => task.title));
      cursor = page.json.next_cursor ?? undefined;
    } while (cursor);
    return titles;
  };
  expect(await walk('due_on')).toEqual([
    'early',
    'middle',
    'late',
    'first undated',
    'second undated',
  ]);
  expect(await walk('-due_on')).toEqual([
    'late',
    'middle',
    'early',
    'second undated',
    'first undated',
  ]);
  // urgent, high, medium, low, none; `-` reverses the whole key, ties by created_at included.
  expect(await walk('-priority')).toEqual([
    'early',
    'late',
    'middle',
    'first undated',
    'second undated',
  ]);
  expect(await walk('priority')).toEqual([
    'second undated',
    'first undated',
    'middle',
    'late',
    'early',
  ]);
});

it("never finds another tenant's tasks, even by its project's id", async () => {
  const everything: TaskFilter = { not: { text: 'nothing-has-this-word' } };
  const ours = await found(everything);
  const theirs = await found(everything, { key: otherKey });
  expect(theirs.length).toBeGreaterThan(0);
  const ourIds = new Set(
    (await search({ filter: everything, limit: 200 })).json.data.map((t: Task) => t.task_id),
  );
  const theirPage = (await search({ filter: everything, limit: 200 }, { key: otherKey })).json.data;
  for (const task of theirPage) expect(ourIds.has(task.task_id)).toBe(false);
  expect(ours).toContain('alpha');
  const theirProject = theirPage[0].project_id;
  expect(await found({ project_id: { in: [theirProject] } })).toEqual([]);
});

it('is a read: a read-only key may search, a key without read may not', async () => {
  const reader = await api.createKey('search', ['read']);
  expect(sorted(await found({ labels: { has: 'ops' } }, { key: reader }))).toEqual([
    'alpha',
    'beta',
  ]);
  const writer = await api.createKey('search', ['write']);
  const refused = await search({ filter: { text: 'alpha' } }, { key: writer });
  expect(refused.status).toBe(403);
  expect(refused.json.type).toBe('/problems/insufficient-scope');
});

it('refuses a filter of the wrong shape with a 400 pointing to each place', async () => {
  const deep = (levels: number): TaskFilter =>
    levels === 0 ? { status: { in: ['pending'] } } : { all: [deep(levels - 1)] };
  const many = Array.from({ length: 51 }, () => ({ priority: { gte: 'low' } }) as TaskFilter);
  const cases: Array<[unknown, string, RegExp]> = [
    [deep(4), '/filter/all/0/all/0/all/0', /4 deep; at most 3/],
    [{ any: [{ not: { all: [{ not: { text: 'deep' } }] } }] }, '/filter/any/0/not/all/0', /4 deep/],
    [
      { all: [...many.slice(0, 25), { any: many.slice(25) }] },
      '/filter',
      /51 conditions; at most 50/,
    ],
    [
      { all: [{ status: { in: ['done'] } }, { lables: { has: 'x' } }] },
      '/filter/all/1/lables',
      /not a field/,
    ],
    [
      { all: [{}, {}, { labels: { hass: 'x' } }] },
      '/filter/all/2/labels/hass',
      /not an operator of labels/,
    ],
    [
      { all: [{ due_on: { lt: '2026-01-01' } }, { labels: { has: ' x' } }] },
      '/filter/all/1/labels/has',
      /label/,
    ],
    [{ text: 'ab' }, '/filter/text', /shorter than 3/],
    [{ text: 'fine but no' }, '/filter/text', /\(no\)/],
    [{ due_on: { lt: '2026-02-30' } }, '/filter/due_on/lt', /not a day that exists/],
    [{ created_at: { gte: '2026-11-21' } }, '/filter/created_at/gte', /timestamp/],
    [{ labels: { has: 'x' }, status: { in: ['done'] } }, '/filter', /exactly one/],
    [{ status: { in: [] } }, '/filter/status/in', /1 to 4/],
    [{ priority: { gte: 'critical' } }, '/filter/priority/gte', /one of/],
    [{ not: [] }, '/filter/not', /must be an object/],
    ['pending', '/filter', /must be an object/],
  ];
  for (const [filter, pointer, message] of cases) {
    const answer = await search({ filter });
    expect([JSON.stringify(filter).slice(0, 80), answer.status]).toEqual([
      JSON.stringify(filter).slice(0, 80),
      400,
    ]);
    expect(answer.json.type).toBe('/problems/invalid-request');
    expect(answer.json.errors).toContainEqual({
      in: 'body',
      pointer,
      message: expect.stringMatching(message),
    });
  }
  // Beside the filter, the rest of the body is checked as the schema says.
  const noFilter = await search({ limit: 10 });
  expect(noFilter.status).toBe(400);
  expect(noFilter.json.errors).toContainEqual(expect.objectContaining({ pointer: '/filter' }));
  const both = await search({ filter: { text: 'ab' }, limit: 0 });
  expect(both.json.errors.map((issue: { pointer: string }) => issue.pointer).sort()).toEqual([
    '/filter/text',
    '/limit',
  ]);
  // Three combinators deep and fifty conditions are taken.
  expect((await search({ filter: deep(3) })).status).toBe(200);
  expect((await search({ filter: { all: many.slice(1) } })).status).toBe(200);
});

it('has no search in 2026-11-28: the path answers as that version routes it', async () => {
  const answer = await search({ filter: { text: 'alpha' } }, { version: '2026-11-28' });
  // /v1/tasks/search is /v1/tasks/{task_id} there, which has no POST: answered as such a path is.
  const asATask = await call(
    'POST',
    `/v1/tasks/${tasks.get('alpha')!.task_id}`,
    {},
    { version: '2026-11-28' },
  );
  expect(asATask.status).toBe(405);
  expect(answer.status).toBe(405);
  expect(answer.json.type).toBe('/problems/method-not-allowed');
  expect(answer.headers.get('allow')).toBe(asATask.headers.get('allow'));
  expect(answer.headers.get('allow')).toMatch(/^(GET|PATCH|DELETE)(, (GET|PATCH|DELETE)){2}$/);
});
