/**
 * The task list pages with a seek, on the engine this jest project runs against. The test lists
 * a project's tasks through the real repository, takes the page query knex actually sends (never
 * re-typed here, so the test follows the repository when the query changes) and checks its
 * EXPLAIN: the page's ids come from the inner query of a deferred join that reads one of the
 * tasks_project_* indexes in sort order, and on a page after a cursor as an index range that
 * starts at the cursor, so a page deep in a list costs what page 1 costs. A plain keyset
 * SELECT * (which MariaDB runs as a ref lookup that steps over every earlier row) or an OFFSET
 * fails it.
 *
 * With several statuses no one index serves both the filter and the order: the ids are then
 * merged from one such seek per status, through the (project_id, status, sort column) index.
 */
import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import type { components } from '../../generated/api';
import { createKnex } from '../../src/db/knex';
import { migrateToLatest } from '../../src/db/migrate';
import { createRepositories, type Repositories } from '../../src/all-repositories';
import { encodeCursor } from '../../src/db/keyset';
import { taskOrder } from '../../src/db/task-order';
import { toDbTimestamp } from '../../src/db/timestamps';
import { createTestDatabase, testEngine, type TestDatabase } from '../support/test-database';

type TaskStatus = components['schemas']['TaskStatus'];
type ListQuery = Parameters<Repositories['tasks']['listForProject']>[2];
type Sort = 'created_at' | '-created_at' | 'updated_at' | '-updated_at';
type SortColumn = 'created_at' | 'updated_at';

/** Enough rows that a scan or a sort would cost the optimizer more than a seek. */
const tasksPerProject = 5000;
const pageSize = 20;

let database: TestDatabase;
let knex: Knex;
let repositories: Repositories;
let tenantId: string;
let projectId: string;

/**
 * Tasks for two projects created alternately (so both projects' timestamps span the same time),
 * updated in another order than created, with statuses mixed differently in each project.
 */
async function seedTasks(listed: string, other: string): Promise<void> {
  const start = Date.parse('2026-01-01T00:00:00.000Z');
  const count = 2 * tasksPerProject;
  const rows = [];
  for (let i = 0; i < count; i++) {
    const inListed = i % 2 === 0;
    const n = Math.floor(i / 2) % 10;
    // The listed project: 60% pending, 10% in_progress, 30% done; the other: 30/40/30.
    const status: TaskStatus = inListed
      ? n < 6
        ? 'pending'
        : n < 7
          ? 'in_progress'
          : 'done'
      : n < 3
        ? 'pending'
        : n < 7
          ? 'in_progress'
          : 'done';
    rows.push({
      task_id: uuidv7(),
      project_id: inListed ? listed : other,
      title: `task ${i}`,
      description: null,
      status,
      created_at: toDbTimestamp(new Date(start + i * 1000).toISOString()),
      // 7919 is prime, so this takes every second of the range once, in a scrambled order.
      updated_at: toDbTimestamp(new Date(start + ((i * 7919) % count) * 1000 + 500).toISOString()),
      // Planning fields: a third without a due date, the rest over a year in scrambled order.
      priority: i % 5,
      due_on:
        i % 3 === 0
          ? null
          : new Date(start + ((i * 7919) % 400) * 86_400_000).toISOString().slice(0, 10),
      assignee: `user${i % 7}`,
      version: 1,
    });
  }
  await knex.batchInsert('tasks', rows, 500);
  const labelled = rows.filter((_row, i) => i % 4 < 2);
  await knex.batchInsert(
    'task_labels',
    labelled.map((row) => ({ task_id: row.task_id, label_fold: 'ops' })),
    500,
  );
}

beforeAll(async () => {
  database = await createTestDatabase();
  knex = createKnex(database.config);
  await migrateToLatest(knex);
  repositories = createRepositories(knex);
  tenantId = (await repositories.tenants.findOrCreate('plans')).tenant_id;
  projectId = (
    await repositories.inTransaction('fixture', (write) =>
      repositories.projects.create(tenantId, { name: 'listed', description: '' }, write),
    )
  ).value.project_id;
  const otherProjectId = (
    await repositories.inTransaction('fixture', (write) =>
      repositories.projects.create(tenantId, { name: 'other', description: '' }, write),
    )
  ).value.project_id;
  await seedTasks(projectId, otherProjectId);
  // Statistics, as a database in use has them, so the optimizer chooses as it would there.
  await knex.raw(testEngine === 'mysql' ? 'ANALYZE TABLE tasks' : 'ANALYZE');
}, 120_000);
afterAll(async () => {
  await knex?.destroy();
  await database?.drop();
});

interface SentQuery {
  sql: string;
  bindings: readonly unknown[];
}

/**
 * Lists a page through the repository and answers the one query that read the tasks, as knex
 * sent it, with the page's next_cursor.
 */
async function listPage(
  query: Omit<ListQuery, 'limit'>,
): Promise<SentQuery & { nextCursor: string | null }> {
  const sent: SentQuery[] = [];
  const record = (q: { sql: string; bindings?: readonly unknown[] }) =>
    sent.push({ sql: q.sql, bindings: q.bindings ?? [] });
  knex.on('query', record);
  let page;
  try {
    page = await repositories.tasks.listForProject(tenantId, projectId, {
      ...query,
      limit: pageSize,
    });
  } finally {
    knex.off('query', record);
  }
  const readsTasks = sent.filter((q) => /\bfrom [`"]tasks[`"]/i.test(q.sql));
  expect(readsTasks).toHaveLength(1);
  expect(page?.data).toHaveLength(pageSize);
  return { ...readsTasks[0], nextCursor: page!.next_cursor };
}

/** What the plan must show for the read that chooses the page's ids. */
interface Expected {
  index: string;
  /** The index's columns before the sort column, each compared to one value. */
  equal: string[];
  column: SortColumn;
  descending: boolean;
  /** It must be a range that starts at the cursor, on the sort column. */
  seek: boolean;
  /** How many reads choose ids: one, or one per status filtered by. */
  reads: number;
}

interface MariaDbExplainRow {
  select_type: string;
  table: string;
  type: string;
  key: string | null;
  Extra: string;
}

/** EXPLAIN FORMAT=JSON: for each read of tasks through the index, the columns of it that it uses. */
async function mariaDbUsedKeyParts(query: SentQuery, index: string): Promise<string[][]> {
  const [[{ EXPLAIN: json }]] = await knex.raw(
    'EXPLAIN FORMAT=JSON ' + query.sql,
    query.bindings as Knex.RawBinding[],
  );
  const found: string[][] = [];
  const visit = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    const table = node as { table_name?: string; key?: string; used_key_parts?: string[] };
    if (table.table_name === 'tasks' && table.key === index && table.used_key_parts)
      found.push(table.used_key_parts);
    Object.values(node).forEach(visit);
  };
  visit(JSON.parse(json));
  return found;
}

async function expectMariaDbPlan(query: SentQuery, expected: Expected): Promise<void> {
  const [rows] = (await knex.raw('EXPLAIN ' + query.sql, query.bindings as Knex.RawBinding[])) as [
    MariaDbExplainRow[],
  ];
  // Every read of tasks but the join back by primary key: the inner queries'.
  const reads = rows.filter(
    (row) => row.table === 'tasks' && !(row.type === 'eq_ref' && row.key === 'PRIMARY'),
  );
  expect(reads).toHaveLength(expected.reads);
  for (const ids of reads) {
    expect(ids).toMatchObject({ select_type: 'DERIVED', key: expected.index });
    if (expected.seek) expect(ids.type).toBe('range');
    else expect(['ref', 'range']).toContain(ids.type);
    // In index order: no sort of every matching row before the LIMIT.
    expect(ids.Extra).not.toContain('Using filesort');
    expect(ids.Extra).not.toContain('Using temporary');
    // Nothing but the index.
    expect(ids.Extra).toContain('Using index');
  }
  if (expected.seek) {
    expect(await mariaDbUsedKeyParts(query, expected.index)).toEqual(
      Array(expected.reads).fill([...expected.equal, expected.column]),
    );
  }
}

interface SqlitePlanRow {
  id: number;
  parent: number;
  detail: string;
}

/** The plan's rows below the given one, however deep. */
function below(rows: SqlitePlanRow[], parent: SqlitePlanRow): SqlitePlanRow[] {
  return rows
    .filter((row) => row.parent === parent.id)
    .flatMap((child) => [child, ...below(rows, child)]);
}

async function expectSqlitePlan(query: SentQuery, expected: Expected): Promise<void> {
  const rows: SqlitePlanRow[] = await knex.raw(
    'EXPLAIN QUERY PLAN ' + query.sql,
    query.bindings as Knex.RawBinding[],
  );
  const details = rows.map((row) => row.detail);
  // Every read of tasks but the join back by primary key: the inner queries'.
  const reads = rows.filter(
    (row) => /^(SCAN|SEARCH) tasks\b/.test(row.detail) && !/\(task_id=\?\)$/.test(row.detail),
  );
  expect(reads.map((row) => row.detail)).toHaveLength(expected.reads);
  // The deferred join's inner query, and in it each seek's own (when missing, the failure shows the whole plan).
  const subquery = (name: string) =>
    rows.find((row) => row.detail === `MATERIALIZE ${name}` || row.detail === `CO-ROUTINE ${name}`);
  const page = subquery('page');
  expect(details).toContainEqual(page?.detail ?? 'CO-ROUTINE page');
  const seeks =
    expected.reads === 1
      ? [page!]
      : Array.from({ length: expected.reads }, (_, i) => subquery(`seek${i}`));
  // A search, never a scan, bounded by the cursor on the sort column when there is one.
  const bounds = [
    ...expected.equal.map((column) => `${column}=?`),
    ...(expected.seek ? [`${expected.column}${expected.descending ? '<' : '>'}?`] : []),
  ];
  const search = new RegExp(
    `^SEARCH tasks USING COVERING INDEX ${expected.index} \\(${bounds.join(' AND ').replace(/\?/g, '\\?')}\\)$`,
  );
  for (const [i, seek] of seeks.entries()) {
    expect(details).toContainEqual(seek?.detail ?? `CO-ROUTINE seek${i}`);
    if (seek !== page) expect(below(rows, page!)).toContainEqual(seek);
    const seekRows = below(rows, seek!);
    const read = seekRows.find((row) => reads.includes(row));
    expect(read?.detail).toMatch(search);
    // In index order: no sort of every matching row before the LIMIT.
    expect(seekRows.map((row) => row.detail)).not.toContainEqual(
      expect.stringMatching(/TEMP B-TREE/),
    );
  }
}

interface Filter {
  name: string;
  status?: TaskStatus[];
  /** The index that serves the list in this column's order, and its columns before that column. */
  index(column: SortColumn): { index: string; equal: string[] };
}

const short = (column: SortColumn) => column.replace('_at', '');
const byStatus = (column: SortColumn) => ({
  index: `tasks_project_status_${short(column)}`,
  equal: ['project_id', 'status'],
});

const filters: Filter[] = [
  {
    name: 'unfiltered',
    index: (column) => ({ index: `tasks_project_${short(column)}`, equal: ['project_id'] }),
  },
  { name: 'filtered by status=in_progress', status: ['in_progress'], index: byStatus },
  {
    name: 'filtered by status=pending&status=in_progress',
    status: ['pending', 'in_progress'],
    index: byStatus,
  },
  {
    name: 'filtered by all three statuses',
    status: ['done', 'pending', 'in_progress'],
    index: byStatus,
  },
];

const sorts: Sort[] = ['created_at', '-created_at', 'updated_at', '-updated_at'];

const cases = sorts.flatMap((sort) =>
  filters.flatMap((filter) =>
    [false, true].map((afterCursor) => {
      const column = sort.replace('-', '') as SortColumn;
      const { index, equal } = filter.index(column);
      const reads = filter.status?.length ?? 1;
      const through = reads === 1 ? index : `${index}, once per status,`;
      const plan = afterCursor
        ? `seeks through ${through} from the cursor`
        : `reads its ids in order from ${through}`;
      const page = afterCursor ? 'page after a cursor' : 'first page';
      const expected: Expected = {
        index,
        equal,
        column,
        descending: sort.startsWith('-'),
        seek: afterCursor,
        reads,
      };
      return {
        title: `the ${page} of a list sorted by ${sort}, ${filter.name}, ${plan}`,
        sort,
        status: filter.status,
        afterCursor,
        expected,
      };
    }),
  ),
);

test.each(cases)('$title', async ({ sort, status, afterCursor, expected }) => {
  let query = await listPage({ sort, status });
  if (afterCursor) {
    expect(query.nextCursor).not.toBeNull();
    query = await listPage({ sort, status, cursor: query.nextCursor! });
  }
  if (testEngine === 'mysql') await expectMariaDbPlan(query, expected);
  else await expectSqlitePlan(query, expected);
});

/**
 * The planning sorts and filters (version 2026-12-15) on the same 5,000 tasks a project: each
 * seek reads its index in order, never sorting the project's matching rows; only the merge of the
 * seeks' first rows (at most twice a page) and the page itself are sorted. A sort by due_on is two
 * seeks of tasks_project_due, the tasks with a date and then those without (nulls last either
 * way), or one once the cursor is among those without. A label is one probe of task_labels by the
 * task's id for each task read, never a read of every project's tasks with that label.
 */
interface PlanningCase {
  title: string;
  query: Omit<ListQuery, 'limit' | 'cursor'>;
  /** The page after page 1, or after a position among the tasks without a due date. */
  after?: 'first page' | 'no due date';
  index: string;
  reads: number;
}

const planningCases: PlanningCase[] = [
  ...(['due_on', '-due_on'] as const).flatMap((sort) => [
    { title: `sort=${sort}, first page`, query: { sort }, index: 'tasks_project_due', reads: 2 },
    {
      title: `sort=${sort}, after a cursor`,
      query: { sort },
      after: 'first page' as const,
      index: 'tasks_project_due',
      reads: 2,
    },
    {
      title: `sort=${sort}, after a task without a due date`,
      query: { sort },
      after: 'no due date' as const,
      index: 'tasks_project_due',
      reads: 1,
    },
  ]),
  ...(['priority', '-priority'] as const).flatMap((sort) =>
    [undefined, 'first page' as const].map((after) => ({
      title: `sort=${sort}, ${after ? 'after a cursor' : 'first page'}`,
      query: { sort },
      after,
      index: 'tasks_project_priority',
      reads: 1,
    })),
  ),
  {
    title: 'sort=created_at, priority=high&priority=low, after a cursor',
    query: { sort: 'created_at', priority: ['high', 'low'] },
    after: 'first page',
    index: 'tasks_project_priority',
    reads: 2,
  },
  {
    title: 'sort=created_at, assignee=user3, after a cursor',
    query: { sort: 'created_at', assignee: 'user3' },
    after: 'first page',
    index: 'tasks_project_assignee',
    reads: 1,
  },
  {
    title: 'sort=created_at, label=ops, after a cursor',
    query: { sort: 'created_at', label: ['Ops'] },
    after: 'first page',
    index: 'tasks_project_created',
    reads: 1,
  },
  {
    title: 'sort=-due_on, label=ops',
    query: { sort: '-due_on', label: ['ops'] },
    index: 'tasks_project_due',
    reads: 2,
  },
];

async function expectPlanningPlan(query: SentQuery, expected: PlanningCase): Promise<void> {
  const labelled = expected.query.label !== undefined;
  if (testEngine === 'mysql') {
    const [rows] = (await knex.raw(
      'EXPLAIN ' + query.sql,
      query.bindings as Knex.RawBinding[],
    )) as [MariaDbExplainRow[]];
    const reads = rows.filter(
      (row) => row.table === 'tasks' && !(row.type === 'eq_ref' && row.key === 'PRIMARY'),
    );
    expect(reads).toHaveLength(expected.reads);
    for (const read of reads) {
      expect(read).toMatchObject({ select_type: 'DERIVED', key: expected.index });
      expect(['ref', 'range']).toContain(read.type);
      expect(read.Extra).not.toContain('Using filesort');
      expect(read.Extra).not.toContain('Using temporary');
      expect(read.Extra).toContain('Using index');
    }
    if (expected.after) expect(reads.map((read) => read.type)).toContain('range');
    const probes = rows.filter((row) => row.table === 'task_labels');
    expect(probes).toHaveLength(labelled ? expected.reads : 0);
    for (const probe of probes)
      expect(probe).toMatchObject({ select_type: 'DEPENDENT SUBQUERY', key: 'PRIMARY' });
    return;
  }
  const rows: SqlitePlanRow[] = await knex.raw(
    'EXPLAIN QUERY PLAN ' + query.sql,
    query.bindings as Knex.RawBinding[],
  );
  const details = rows.map((row) => row.detail);
  const reads = details.filter(
    (detail) => /^(SCAN|SEARCH) tasks\b/.test(detail) && !/\(task_id=\?\)$/.test(detail),
  );
  expect(reads).toHaveLength(expected.reads);
  for (const read of reads)
    expect(read).toMatch(
      new RegExp(`^SEARCH tasks USING COVERING INDEX ${expected.index} \\(project_id=\\?`),
    );
  // Sorted: the merge of several seeks, and the page; never a seek's own rows.
  expect(details.filter((detail) => detail.includes('TEMP B-TREE'))).toHaveLength(
    expected.reads > 1 ? 2 : 1,
  );
  const probes = details.filter((detail) => detail.startsWith('SEARCH task_labels'));
  expect(probes).toHaveLength(labelled ? expected.reads : 0);
  for (const probe of probes)
    expect(probe).toMatch(/\((task_id=\? AND label_fold=\?|label_fold=\? AND task_id=\?)\)$/);
}

test.each(planningCases)('$title: each seek reads $index in order', async (planning) => {
  const { query, after } = planning;
  let sent = await listPage(query);
  if (after === 'first page') sent = await listPage({ ...query, cursor: sent.nextCursor! });
  if (after === 'no due date') {
    // Half way through the project's tasks that have no due date.
    const cursor = encodeCursor(taskOrder(query.sort), {
      lead: null,
      at: '2026-01-01 01:23:20.000',
      id: '0193a5b3-5a71-7f02-b4d6-0e1f2a3b4c5d',
    });
    sent = await listPage({ ...query, cursor });
  }
  await expectPlanningPlan(sent, planning);
});
