/**
 * A project's task list by the planning fields, version 2026-12-15 (issue 46, item 1;
 * contract-decisions "Planning with tasks"): the filters `priority` (any of), `assignee`, `label`
 * (all of, by case fold, through the task_labels index), `due_before` and `due_after` (strictly;
 * a task without a due date matches neither), and the sorts `due_on` and `priority` (`-`
 * reverses the key, ties included, but tasks without a due date stay last), paged by keyset
 * without a task skipped or repeated while tasks are added. In 2026-11-28 none of it exists: each
 * parameter and sort value is a 400 naming the parameter.
 */
import type { components, operations } from '../../generated/api';
import { startTestService, type TestService } from '../support/test-service';

type Task = components['schemas']['Task'];
type Query = NonNullable<operations['listProjectTasks']['parameters']['query']>;
type Sort = NonNullable<Query['sort']>;

const [newest, older] = ['2026-12-15', '2026-11-28'];
const priorities = ['none', 'low', 'medium', 'high', 'urgent'];

let api: TestService;
let key: string;
/** A project with tasks of every kind, and the tasks as created. */
let projectId: string;
let tasks: Task[];

async function newProject(): Promise<string> {
  const { data } = await api.client(key).POST('/v1/projects', { body: { name: 'plans' } });
  return data!.project_id;
}

async function create(project: string, fields: Partial<Task> & { title?: string }): Promise<Task> {
  const { data, response } = await api.client(key).POST('/v1/tasks', {
    body: { project_id: project, title: 'task', ...fields },
  });
  expect(response.status).toBe(201);
  return data!;
}

/** Every page of the list, in order; `between` runs after each page that has a next. */
async function walk(project: string, query: Query, between?: () => Promise<void>) {
  const seen: Task[] = [];
  let cursor: string | undefined;
  do {
    const { data, response } = await api.client(key).GET('/v1/projects/{project_id}/tasks', {
      params: { path: { project_id: project }, query: { ...query, cursor } },
    });
    expect(response.status).toBe(200);
    seen.push(...data!.data);
    cursor = data!.next_cursor ?? undefined;
    if (cursor && between) await between();
  } while (cursor);
  return seen;
}

const ids = (list: Task[]) => list.map((task) => task.task_id);

/** The list's order as the contract says it: the whole key reversed by `-`, due dates unset last. */
function bySort(sort: Sort) {
  const descending = sort.startsWith('-');
  const name = sort.replace('-', '');
  const compare = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);
  const key = (task: Task): Array<string | number> => {
    if (name === 'priority')
      return [priorities.indexOf(task.priority), task.created_at, task.task_id];
    if (name === 'due_on') return [task.due_on ?? '', task.created_at, task.task_id];
    return [task[name as 'created_at' | 'updated_at'], task.task_id];
  };
  return (a: Task, b: Task) => {
    if (name === 'due_on' && (a.due_on === null) !== (b.due_on === null))
      return a.due_on === null ? 1 : -1;
    const [ka, kb] = [key(a), key(b)];
    const order = ka.map((value, i) => compare(value, kb[i])).find((c) => c !== 0) ?? 0;
    return descending ? -order : order;
  };
}

const fold = (label: string) => label.toUpperCase().toLowerCase();

/** What the filters of `query` keep, as the contract says it. */
function matches(task: Task, query: Query): boolean {
  const { status, priority, assignee, label, due_before, due_after } = query;
  return (
    (!status || status.includes(task.status)) &&
    (!priority || priority.includes(task.priority)) &&
    (assignee === undefined || task.assignee === assignee) &&
    (label ?? []).every((wanted) => task.labels.some((had) => fold(had) === fold(wanted))) &&
    (due_before === undefined || (task.due_on !== null && task.due_on < due_before)) &&
    (due_after === undefined || (task.due_on !== null && task.due_on > due_after))
  );
}

const expected = (query: Query) =>
  ids(tasks.filter((task) => matches(task, query)).sort(bySort(query.sort ?? 'created_at')));

beforeAll(async () => {
  api = await startTestService();
  key = await api.createKey('planning-lists');
  projectId = await newProject();
  // Ties on every key: due dates shared and missing, priorities shared, assignees shared.
  const fixture: Array<Partial<Task>> = [
    { priority: 'high', due_on: '2026-12-20', labels: ['Ops', 'web'], assignee: 'ana' },
    { priority: 'low', due_on: null, labels: ['ops'], assignee: 'bo' },
    { priority: 'urgent', due_on: '2026-12-18', labels: ['web'], assignee: null },
    { priority: 'high', due_on: '2026-12-20', labels: [], assignee: 'ana' },
    { priority: 'none', due_on: '2027-01-05', labels: ['OPS', 'Straße'], assignee: 'Ana' },
    { priority: 'medium', due_on: null, labels: ['web', 'ops'], assignee: 'ana' },
    { priority: 'urgent', due_on: '2026-12-18', labels: ['ops'], assignee: 'bo' },
    { priority: 'none', due_on: null, labels: [], assignee: null },
    { priority: 'high', due_on: '2026-11-30', labels: ['Web'], assignee: 'ana' },
    { priority: 'low', due_on: '2026-12-21', labels: ['ops', 'launch'], assignee: 'bo' },
    { priority: 'high', due_on: null, labels: ['launch'], assignee: 'ana' },
  ];
  tasks = [];
  for (const [i, fields] of fixture.entries())
    tasks.push(await create(projectId, { title: `task ${i}`, ...fields }));
  // Some states too, so that the status filter combines with the others.
  for (const i of [0, 5, 6]) {
    const { data } = await api.client(key).PATCH('/v1/tasks/{task_id}', {
      params: { path: { task_id: tasks[i].task_id } },
      body: { status: i === 6 ? 'cancelled' : 'done' },
    });
    tasks[i] = data!;
  }
});
afterAll(() => api.stop());

describe.each(['due_on', '-due_on', 'priority', '-priority'] as Sort[])('sort=%s', (sort) => {
  it('walks every task exactly once in its order, ties by created_at then id', async () => {
    for (const limit of [1, 2, 5, 200]) {
      expect(ids(await walk(projectId, { sort, limit }))).toEqual(expected({ sort }));
    }
  });

  if (sort.endsWith('due_on')) {
    it('puts the tasks without a due date last, in created_at order reversed with the rest', async () => {
      const seen = await walk(projectId, { sort, limit: 3 });
      const unset = tasks.filter((task) => task.due_on === null);
      expect(seen.slice(-unset.length).every((task) => task.due_on === null)).toBe(true);
      const inCreation = ids(unset);
      expect(ids(seen.slice(-unset.length))).toEqual(
        sort.startsWith('-') ? inCreation.reverse() : inCreation,
      );
      const dates = seen.slice(0, -unset.length).map((task) => task.due_on!);
      expect(dates).toEqual(
        [...dates].sort((a, b) => (sort.startsWith('-') ? (a < b ? 1 : -1) : a < b ? -1 : 1)),
      );
    });
  }
});

const filters: Array<[string, Query]> = [
  ['one priority', { priority: ['high'] }],
  ['several priorities, one given twice', { priority: ['urgent', 'low', 'urgent'] }],
  ['an assignee, compared as written', { assignee: 'ana' }],
  ['a label by another case', { label: ['OPS'] }],
  ['two labels, all of them', { label: ['ops', 'Web'] }],
  ['a label that folds with ß', { label: ['STRASSE'] }],
  ['a label no task has', { label: ['nothing'] }],
  ['due_before, strictly', { due_before: '2026-12-20' }],
  ['due_after, strictly', { due_after: '2026-12-18' }],
  ['due_after and due_before', { due_after: '2026-11-30', due_before: '2027-01-05' }],
  ['status and priority', { status: ['done', 'pending'], priority: ['high', 'medium'] }],
  [
    'priority, label and due_after',
    { priority: ['high', 'urgent'], label: ['web'], due_after: '2026-12-01' },
  ],
  ['assignee, label and status', { assignee: 'bo', label: ['ops'], status: ['pending'] }],
];
const sorts: Sort[] = ['created_at', '-updated_at', 'due_on', '-due_on', 'priority', '-priority'];

describe.each(filters)('filtered by %s', (_name, filter) => {
  it.each(sorts)('lists exactly the matching tasks, sort=%s, across pages', async (sort) => {
    const want = expected({ ...filter, sort });
    expect(ids(await walk(projectId, { ...filter, sort, limit: 2 }))).toEqual(want);
  });
});

it('keeps tasks without a due date out of due_before and due_after alike', async () => {
  const before = await walk(projectId, { due_before: '9999-12-31', limit: 200 });
  const after = await walk(projectId, { due_after: '0001-01-01', limit: 200 });
  const dated = ids(tasks.filter((task) => task.due_on !== null));
  expect(ids(before)).toEqual(dated);
  expect(ids(after)).toEqual(dated);
});

it('finds a task by label through the folds stored beside it, not through the labels it shows', async () => {
  const project = await newProject();
  const task = await create(project, { labels: ['Release'] });
  expect(ids(await walk(project, { label: ['RELEASE'], limit: 5 }))).toEqual([task.task_id]);
  // Without its fold in task_labels the task is not found, though its labels still name it.
  await api.service.knex('task_labels').where('task_id', task.task_id).delete();
  expect(await walk(project, { label: ['release'], limit: 5 })).toEqual([]);
});

describe.each(['due_on', '-due_on', 'priority', '-priority'] as Sort[])(
  'sort=%s while tasks are added',
  (sort) => {
    it('returns every task that was there exactly once, in order', async () => {
      const project = await newProject();
      const dates = [
        '2026-12-10',
        null,
        '2026-12-01',
        '2026-12-31',
        null,
        '2026-12-10',
        '2026-12-20',
      ];
      const start: Task[] = [];
      for (const [i, due_on] of dates.entries())
        start.push(
          await create(project, { due_on, priority: priorities[i % 5] as Task['priority'] }),
        );
      const added: Task[] = [];
      let step = 0;
      const seen = await walk(project, { sort, limit: 2 }, async () => {
        // Before the walk's place, at it and after it, and without a date: each kind of newcomer.
        const due_on = [null, '2026-11-01', '2026-12-10', '2027-06-01'][step % 4];
        added.push(
          await create(project, { due_on, priority: priorities[step % 5] as Task['priority'] }),
        );
        step++;
      });
      const seenIds = ids(seen);
      expect(new Set(seenIds).size).toBe(seenIds.length);
      for (const task of start) expect(seenIds).toContain(task.task_id);
      // What it listed is in the list's order, newcomers included.
      expect(seenIds).toEqual(ids([...seen].sort(bySort(sort))));
      expect(added.length).toBeGreaterThan(0);
    });
  },
);

describe('refusals', () => {
  const list = (query: string, version = newest) =>
    api.send('GET', `/v1/projects/${projectId}/tasks?${query}`, {
      key,
      headers: { 'Api-Version': version },
    });

  it.each([
    ['due_before=2026-02-30', 'due_before'],
    ['due_after=2026-13-01', 'due_after'],
    ['due_before=2026-12-1', 'due_before'],
    ['due_after=tomorrow', 'due_after'],
    ['priority=critical', 'priority'],
    ['priority=high&priority=critical', 'priority'],
    ['assignee=', 'assignee'],
    [`assignee=${'a'.repeat(201)}`, 'assignee'],
    ['label=%20ops', 'label'],
    [`label=${'x'.repeat(51)}`, 'label'],
    ['sort=due', 'sort'],
  ])('refuses %s with a 400 naming the parameter', async (query, name) => {
    const answer = await list(query);
    expect(answer.status).toBe(400);
    expect(answer.json.type).toBe('/problems/invalid-request');
    expect(answer.json.errors).toEqual([expect.objectContaining({ in: 'query', name })]);
  });

  it('refuses a cursor made for another sort, or naming a due date or priority no task can have', async () => {
    const first = await walk(projectId, { sort: 'due_on', limit: 50 });
    expect(first.length).toBeGreaterThan(1);
    const { data } = await api.client(key).GET('/v1/projects/{project_id}/tasks', {
      params: { path: { project_id: projectId }, query: { sort: 'due_on', limit: 1 } },
    });
    const cursor = data!.next_cursor!;
    for (const sort of ['-due_on', 'priority', 'created_at']) {
      const answer = await list(`sort=${sort}&cursor=${cursor}`);
      expect(answer.status).toBe(400);
      expect(answer.json.type).toBe('/problems/invalid-cursor');
    }
    const position = JSON.parse(Buffer.from(cursor, 'base64url').toString());
    const forged = (change: object) =>
      Buffer.from(JSON.stringify({ ...position, ...change })).toString('base64url');
    for (const [sort, change] of [
      ['due_on', { v: '2026-02-30' }],
      ['due_on', { v: 20261201 }],
      ['due_on', { v: undefined }],
      ['priority', { s: 'priority', v: 5 }],
      ['priority', { s: 'priority', v: null }],
      ['priority', { s: 'priority', v: 'high' }],
    ] as const) {
      const answer = await list(`sort=${sort}&cursor=${forged(change)}`);
      expect([sort, change, answer.status, answer.json.type]).toEqual([
        sort,
        change,
        400,
        '/problems/invalid-cursor',
      ]);
    }
    // The same cursor with its own sort goes on.
    expect((await list(`sort=due_on&cursor=${cursor}`)).status).toBe(200);
  });

  it.each([
    ['priority=high', 'priority'],
    ['assignee=ana', 'assignee'],
    ['label=ops', 'label'],
    ['due_before=2027-01-01', 'due_before'],
    ['due_after=2026-01-01', 'due_after'],
    ['sort=due_on', 'sort'],
    ['sort=-due_on', 'sort'],
    ['sort=priority', 'sort'],
    ['sort=-priority', 'sort'],
  ])('refuses %s in 2026-11-28 with a 400 naming the parameter', async (query, name) => {
    const answer = await list(query, older);
    expect(answer.status).toBe(400);
    expect(answer.headers.get('api-version')).toBe(older);
    expect(answer.json.type).toBe('/problems/invalid-request');
    expect(answer.json.errors).toEqual([expect.objectContaining({ in: 'query', name })]);
    expect(answer.json.detail).toContain(`It is valid in API version ${newest}`);
    // The same request is taken in the newest version.
    expect((await list(query)).status).toBe(200);
  });

  it('still lists in 2026-11-28 by the sorts and filters it has', async () => {
    const answer = await list('sort=-updated_at&status=pending&limit=200', older);
    expect(answer.status).toBe(200);
    expect(answer.json.data.map((task: Task) => task.task_id)).toEqual(
      expected({ sort: '-updated_at', status: ['pending'] }),
    );
  });
});
