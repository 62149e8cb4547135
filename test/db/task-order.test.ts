/**
 * The task orders for readers other than a project's list (a search across projects): orderTasks
 * orders a query over tasks, joined to projects here, and keeps the tasks after a cursor;
 * nextTaskCursor makes the next. Walking every page gives each task once, in the order the
 * contract gives the lists (the whole key reversed by `-`, tasks without due_on last either way,
 * ties by created_at then id), on the engine of the jest project; a cursor of a project's list
 * goes on in it too, and one made for another sort is refused.
 */
import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import { createRepositories } from '../../src/all-repositories';
import { InvalidCursorError } from '../../src/errors';
import { nextTaskCursor, orderTasks, type TaskSort } from '../../src/db/task-order';
import { databaseWithTenant, projectRow } from '../support/statements-sent';

let database: Awaited<ReturnType<typeof databaseWithTenant>>;
let knex: Knex;

interface Row {
  task_id: string;
  project_id: string;
  created_at: string;
  due_on: string | null;
  priority: number;
}
const rows: Row[] = [];

beforeAll(async () => {
  database = await databaseWithTenant();
  knex = database.knex;
  await knex('projects').insert([projectRow('p1'), projectRow('p2')]);
  const dates = [null, '2026-12-01', '2026-12-24', null, '2026-12-01', '2027-01-10'];
  for (let i = 0; i < 30; i++) {
    // Three tasks a millisecond, so that created_at ties too and the id decides.
    const created = `2026-12-01 10:00:00.${String(100 + Math.floor(i / 3)).padStart(3, '0')}`;
    rows.push({
      task_id: uuidv7(),
      project_id: i % 2 ? 'p1' : 'p2',
      created_at: created,
      due_on: dates[(i * 7) % dates.length],
      priority: (i * 3) % 5,
    });
  }
  // Inserted in another order than their ids', so that nothing follows from the insertion.
  await knex('tasks').insert(
    [...rows].reverse().map((row) => ({
      ...row,
      title: 't',
      description: null,
      status: 'pending',
      updated_at: row.created_at,
      version: 1,
    })),
  );
});
afterAll(() => database.close());

const sorts: TaskSort[] = [
  'created_at',
  '-created_at',
  'due_on',
  '-due_on',
  'priority',
  '-priority',
];

function expected(sort: TaskSort): string[] {
  const descending = sort.startsWith('-');
  const name = sort.replace('-', '') as 'created_at' | 'due_on' | 'priority';
  const key = (row: Row) =>
    (name === 'created_at' ? [] : [row[name] ?? '']).concat([row.created_at, row.task_id]);
  return [...rows]
    .sort((a, b) => {
      if (name === 'due_on' && (a.due_on === null) !== (b.due_on === null))
        return a.due_on === null ? 1 : -1;
      const [ka, kb] = [key(a), key(b)];
      const i = ka.findIndex((value, at) => value !== kb[at]);
      const order = i < 0 ? 0 : ka[i] < kb[i] ? -1 : 1;
      return descending ? -order : order;
    })
    .map((row) => row.task_id);
}

/** A search-like query: the tenant's tasks, across its projects. */
const tenantsTasks = () =>
  knex('tasks')
    .select('tasks.*')
    .join('projects', 'projects.project_id', 'tasks.project_id')
    .where('projects.tenant_id', 'tenant');

async function walk(sort: TaskSort, limit: number, cursor?: string): Promise<string[]> {
  const seen: string[] = [];
  do {
    const page: Array<Record<string, unknown>> = await orderTasks(
      tenantsTasks(),
      sort,
      cursor,
    ).limit(limit + 1);
    seen.push(...page.slice(0, limit).map((row) => row.task_id as string));
    cursor = page.length > limit ? nextTaskCursor(sort, page[limit - 1]) : undefined;
  } while (cursor);
  return seen;
}

it.each(sorts)('walks every task of the tenant once by %s, at any page size', async (sort) => {
  for (const limit of [1, 4, 7, 100]) expect(await walk(sort, limit)).toEqual(expected(sort));
});

it('goes on from a cursor of a project list, and refuses one made for another sort', async () => {
  const repositories = createRepositories(knex);
  const inP1 = rows.filter((row) => row.project_id === 'p1').map((row) => row.task_id);
  for (const sort of ['due_on', '-priority'] as TaskSort[]) {
    const page = await repositories.tasks.listForProject('tenant', 'p1', { sort, limit: 4 });
    const rest = await walk(sort, 5, page!.next_cursor!);
    expect(rest.filter((id) => inP1.includes(id))).toEqual(
      expected(sort)
        .filter((id) => inP1.includes(id))
        .slice(4),
    );
  }
  const cursor = nextTaskCursor('due_on', { ...rows[0], due_on: null });
  expect(() => orderTasks(tenantsTasks(), '-due_on', cursor)).toThrow(InvalidCursorError);
  expect(() => orderTasks(tenantsTasks(), 'priority', cursor)).toThrow(InvalidCursorError);
});

it.each(sorts)(
  "walks a project's list by %s through its compiled statement, each project its own tasks",
  async (sort) => {
    // An unfiltered list runs a statement compiled once per sort, kind of cursor and page size
    // (src/db/keyset.ts): walked for two projects, each gets its own tasks in the order.
    const { tasks } = createRepositories(knex);
    for (const project of ['p1', 'p2'])
      for (const limit of [1, 4, 7]) {
        const seen: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await tasks.listForProject('tenant', project, { sort, limit, cursor });
          seen.push(...page!.data.map((task) => task.task_id));
          cursor = page!.next_cursor ?? undefined;
        } while (cursor);
        const own = rows.filter((row) => row.project_id === project).map((row) => row.task_id);
        expect(seen).toEqual(expected(sort).filter((id) => own.includes(id)));
      }
  },
);
