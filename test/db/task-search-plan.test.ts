/**
 * A search across a tenant's projects (POST /v1/tasks/search) reads the tenant's tasks through an
 * index led by tenant_id in the page's order, on the engine this jest project runs against, for
 * the searches issue 46 times: by assignee, status and a due_on range; by two labels; by `text`.
 * As in task-list-plan.test.ts, the page query is the one the repository sends. The ids of a page
 * come from one read in index order (no sort of every matching task), which after a cursor starts
 * at it; on MariaDB, ANALYZE counts the rows that read examined, which must be of the order of a
 * page, not of the tenant's tasks. `text` of a word in few of the tenant's newest tasks is found
 * through the full-text index: it reads the tasks with the word, however many tasks the tenant
 * has; of a word in many (here, every task), each task read in order is probed for its words
 * through task_search_words' key, and a page reads a page's worth.
 */
import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import { createKnex } from '../../src/db/knex';
import { migrateToLatest } from '../../src/db/migrate';
import { createRepositories, type Repositories } from '../../src/all-repositories';
import { searchWords, type TaskFilter } from '../../src/db/task-filter';
import { toDbTimestamp } from '../../src/db/timestamps';
import { createTestDatabase, testEngine, type TestDatabase } from '../support/test-database';

/** The searched tenant's tasks, over its projects; the other tenant has as many. */
const tasksPerTenant = 6000;
const projectsPerTenant = 4;
const pageSize = 20;
/**
 * In one task of this many: the word `text` looks for when it is rare, in 2 of the tenant's
 * newest 500 (fewer than the 4 from which a search probes each task for it, tasks-repository.ts).
 * Every task's title has `task`.
 */
const rareEvery = 200;

let database: TestDatabase;
let knex: Knex;
let repositories: Repositories;
let tenantId: string;

const statuses = ['pending', 'in_progress', 'done', 'cancelled'];
const assignees = ['ana', 'ben', 'chen', null];

/**
 * A tenant's tasks, its projects taking turns, a second apart, interleaved with the other
 * tenant's: a quarter each status and assignee, due dates over 200 days (a tenth none), the label
 * backend on half and ops on a third, each drawn apart so that a sixth have both.
 */
async function seedTenant(tenant: string, offset: number): Promise<void> {
  const projectIds: string[] = [];
  for (let p = 0; p < projectsPerTenant; p++)
    projectIds.push(
      (
        await repositories.inTransaction('fixture', (write) =>
          repositories.projects.create(tenant, { name: `p${p}`, description: '' }, write),
        )
      ).value.project_id,
    );
  const start = Date.parse('2026-01-01T00:00:00.000Z');
  const rows = [];
  const labels = [];
  const words = [];
  for (let i = 0; i < tasksPerTenant; i++) {
    const taskId = uuidv7();
    const taskLabels = [...(i % 2 === 0 ? ['backend'] : []), ...(i % 3 === 0 ? ['ops'] : [])];
    const description = i % rareEvery === 7 ? 'needs quixote' : null;
    rows.push({
      task_id: taskId,
      project_id: projectIds[i % projectsPerTenant],
      tenant_id: tenant,
      title: `task ${i}`,
      description,
      status: statuses[Math.floor(i / 4) % 4],
      created_at: toDbTimestamp(new Date(start + (2 * i + offset) * 1000).toISOString()),
      updated_at: toDbTimestamp(new Date(start + (2 * i + offset) * 1000).toISOString()),
      priority: i % 5,
      due_on:
        i % 10 === 9
          ? null
          : new Date(start + ((i * 7919) % 200) * 86_400_000).toISOString().slice(0, 10),
      labels: JSON.stringify(taskLabels),
      assignee: assignees[i % 4],
      version: 1,
    });
    labels.push(...taskLabels.map((label_fold) => ({ task_id: taskId, label_fold })));
    words.push({
      task_id: taskId,
      search_words: searchWords(`task ${i}`, description),
      tenant_id: tenant,
      created_at: rows[rows.length - 1].created_at,
    });
  }
  await knex.batchInsert('tasks', rows, 500);
  await knex.batchInsert('task_labels', labels, 500);
  await knex.batchInsert('task_search_words', words, 500);
}

beforeAll(async () => {
  database = await createTestDatabase();
  knex = createKnex(database.config);
  await migrateToLatest(knex);
  repositories = createRepositories(knex);
  tenantId = (await repositories.tenants.findOrCreate('searched')).tenant_id;
  const otherId = (await repositories.tenants.findOrCreate('other')).tenant_id;
  await seedTenant(tenantId, 0);
  await seedTenant(otherId, 1);
  // Statistics, as a database in use has them, so the optimizer chooses as it would there.
  await knex.raw(
    testEngine === 'mysql' ? 'ANALYZE TABLE tasks, task_labels, task_search_words' : 'ANALYZE',
  );
}, 120_000);
afterAll(async () => {
  await knex?.destroy();
  await database?.drop();
});

interface SentQuery {
  sql: string;
  bindings: readonly unknown[];
}

/** Searches a page through the repository; the one query that read tasks, and the next cursor. */
async function searchPage(
  filter: TaskFilter,
  cursor?: string,
): Promise<SentQuery & { nextCursor: string | null }> {
  const sent: SentQuery[] = [];
  const record = (q: { sql: string; bindings?: readonly unknown[] }) =>
    sent.push({ sql: q.sql, bindings: q.bindings ?? [] });
  knex.on('query', record);
  let page;
  try {
    page = await repositories.tasks.search(tenantId, {
      filter,
      sort: 'created_at',
      limit: pageSize,
      cursor,
    });
  } finally {
    knex.off('query', record);
  }
  const readsTasks = sent.filter((q) => /\bfrom [`"]tasks[`"]/i.test(q.sql));
  // A filter with `text` is first tried on the tenant's newest tasks (textLookup).
  const sampled = JSON.stringify(filter).includes('"text"');
  expect(readsTasks).toHaveLength(sampled ? 2 : 1);
  if (sampled) expect(readsTasks[0].sql).toMatch(/^select count\(\*\) as `n` from \(select/);
  expect(page.data).toHaveLength(pageSize);
  return { ...readsTasks[readsTasks.length - 1], nextCursor: page.next_cursor };
}

interface Case {
  title: string;
  filter: TaskFilter;
  /** The index the page's ids are read through, in order, and its columns compared to one value. */
  index: string;
  equal: string[];
  /** Whether each task read is probed for its labels through task_labels' key. */
  probesLabels: boolean;
  /** Whether each task read is probed for its words through task_search_words' key. */
  probesWords?: boolean;
  /** At most how many of the tenant's tasks a page's read may examine. */
  examined: number;
}

const cases: Case[] = [
  {
    title: 'assignee, status and a due_on range',
    filter: {
      all: [
        { assignee: { eq: 'ben' } },
        { status: { in: ['pending', 'in_progress'] } },
        { due_on: { gte: '2026-02-01', lt: '2026-06-01' } },
      ],
    },
    index: 'tasks_tenant_assignee',
    equal: ['tenant_id', 'assignee'],
    probesLabels: false,
    // Half of ben's tasks have such a status, and about 60 % such a due date.
    examined: 8 * (pageSize + 1),
  },
  {
    title: 'two labels (has_all)',
    filter: { labels: { has_all: ['Backend', 'ops'] } },
    index: 'tasks_tenant_created',
    equal: ['tenant_id'],
    probesLabels: true,
    // A sixth have both.
    examined: 8 * (pageSize + 1),
  },
  {
    title: 'text, a word in every task',
    filter: { text: 'Task' },
    index: 'tasks_tenant_created',
    equal: ['tenant_id'],
    probesLabels: false,
    probesWords: true,
    // The page and one more; after a cursor, the cursor's own task too (its created_at is in range).
    examined: pageSize + 2,
  },
];

interface MariaDbExplainRow {
  select_type: string;
  table: string;
  type: string;
  key: string | null;
  Extra: string;
}

/** The reads of tasks in ANALYZE FORMAT=JSON, with the rows each examined. */
async function mariaDbReads(
  query: SentQuery,
): Promise<Array<{ key?: string; used_key_parts?: string[]; r_rows?: number; r_loops?: number }>> {
  const [[{ ANALYZE: json }]] = await knex.raw(
    'ANALYZE FORMAT=JSON ' + query.sql,
    query.bindings as Knex.RawBinding[],
  );
  const found: Array<{ key?: string; r_rows?: number; r_loops?: number }> = [];
  const visit = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    const table = node as { table_name?: string };
    if (table.table_name === 'tasks') found.push(node as (typeof found)[number]);
    Object.values(node).forEach(visit);
  };
  visit(JSON.parse(json));
  return found;
}

async function expectMariaDbPlan(query: SentQuery, expected: Case, afterCursor: boolean) {
  const [rows] = (await knex.raw('EXPLAIN ' + query.sql, query.bindings as Knex.RawBinding[])) as [
    MariaDbExplainRow[],
  ];
  const reads = rows.filter(
    (row) => row.table === 'tasks' && !(row.type === 'eq_ref' && row.key === 'PRIMARY'),
  );
  expect(reads).toHaveLength(1);
  expect(reads[0]).toMatchObject({ select_type: 'DERIVED', key: expected.index });
  expect(reads[0].type).toBe(afterCursor ? 'range' : 'ref');
  // In index order: no sort of every matching task before the LIMIT.
  expect(reads[0].Extra).not.toContain('Using filesort');
  expect(reads[0].Extra).not.toContain('Using temporary');
  // A word's tasks are not found through the full-text index: each task read is looked up.
  const words = rows.filter((row) => row.table === 'task_search_words');
  if (expected.probesWords) {
    expect(words).toHaveLength(1);
    expect(words[0]).toMatchObject({ select_type: 'DERIVED', type: 'eq_ref', key: 'PRIMARY' });
  } else expect(words).toEqual([]);
  const probes = rows.filter((row) => row.table === 'task_labels');
  if (expected.probesLabels) {
    expect(probes).toHaveLength(1);
    expect(probes[0]).toMatchObject({ select_type: 'DEPENDENT SUBQUERY', key: 'PRIMARY' });
  } else {
    expect(probes).toEqual([]);
    // The index holds every column the filter compares: no task's row is read to choose.
    expect(reads[0].Extra).toContain('Using index');
  }
  const analyzed = (await mariaDbReads(query)).filter((read) => read.key === expected.index);
  expect(analyzed).toHaveLength(1);
  if (afterCursor) expect(analyzed[0].used_key_parts).toEqual([...expected.equal, 'created_at']);
  expect(analyzed[0].r_rows).toBeGreaterThanOrEqual(pageSize);
  expect(analyzed[0].r_rows).toBeLessThanOrEqual(expected.examined);
}

interface SqlitePlanRow {
  id: number;
  parent: number;
  detail: string;
}

async function sqlitePlan(query: SentQuery): Promise<string[]> {
  const rows: SqlitePlanRow[] = await knex.raw(
    'EXPLAIN QUERY PLAN ' + query.sql,
    query.bindings as Knex.RawBinding[],
  );
  return rows.map((row) => row.detail);
}

async function expectSqlitePlan(query: SentQuery, expected: Case, afterCursor: boolean) {
  const details = await sqlitePlan(query);
  const reads = details.filter(
    (detail) => /^(SCAN|SEARCH) tasks\b/.test(detail) && !/\(task_id=\?\)$/.test(detail),
  );
  expect(reads).toHaveLength(1);
  const bounds = [
    ...expected.equal.map((column) => `${column}=\\?`),
    ...(afterCursor ? ['created_at>\\?'] : []),
  ].join(' AND ');
  expect(reads[0]).toMatch(
    new RegExp(`^SEARCH tasks USING (COVERING )?INDEX ${expected.index} \\(${bounds}\\)$`),
  );
  // Only the page itself is sorted, never the tenant's matching tasks.
  expect(details.filter((detail) => detail.includes('TEMP B-TREE'))).toHaveLength(1);
  const words = details.filter((detail) => /^(SCAN|SEARCH) task_search/.test(detail));
  if (expected.probesWords) {
    expect(words).toHaveLength(1);
    expect(words[0]).toMatch(/^SEARCH task_search_words USING .*\(task_id=\?\)$/);
  } else expect(words).toEqual([]);
  const probes = details.filter((detail) => detail.startsWith('SEARCH task_labels'));
  expect(probes).toHaveLength(expected.probesLabels ? 1 : 0);
  for (const probe of probes)
    expect(probe).toMatch(/\((task_id=\? AND label_fold=\?|label_fold=\? AND task_id=\?)\)$/);
}

const planCases = cases.flatMap((c) =>
  [false, true].map((afterCursor) => ({
    ...c,
    afterCursor,
    page: afterCursor ? 'the page after a cursor' : 'the first page',
  })),
);

test.each(planCases)(
  '$title, $page: its ids are read in order through $index',
  async (expected) => {
    let query = await searchPage(expected.filter);
    if (expected.afterCursor) query = await searchPage(expected.filter, query.nextCursor!);
    if (testEngine === 'mysql') await expectMariaDbPlan(query, expected, expected.afterCursor);
    else await expectSqlitePlan(query, expected, expected.afterCursor);
  },
);

test('text alone: the page is picked among the rows with the word, found through the full-text index, and only its tasks are read', async () => {
  const query = await searchPage({ text: 'quixote' });
  if (testEngine === 'mysql') {
    const [rows] = (await knex.raw(
      'EXPLAIN ' + query.sql,
      query.bindings as Knex.RawBinding[],
    )) as [MariaDbExplainRow[]];
    expect(rows.find((row) => row.table === 'task_search_words')).toMatchObject({
      type: 'fulltext',
      key: 'task_search',
    });
    for (const row of rows.filter((row) => row.table === 'tasks'))
      expect(row).toMatchObject({ type: 'eq_ref', key: 'PRIMARY' });
    // The page's tasks and no other: not each of the 60 with the word (both tenants') to sort them.
    const read = (await mariaDbReads(query)).map((r) => (r.r_rows ?? 0) * (r.r_loops ?? 1));
    expect(read.reduce((sum, n) => sum + n, 0)).toBeLessThanOrEqual(pageSize + 1);
  } else {
    const details = await sqlitePlan(query);
    expect(details).toContainEqual(expect.stringMatching(/^SCAN task_search VIRTUAL TABLE INDEX/));
    for (const read of details.filter((detail) => /^(SCAN|SEARCH) tasks\b/.test(detail)))
      expect(read).toMatch(/\(task_id=\?\)$|USING INTEGER PRIMARY KEY|PRIMARY KEY/);
  }
  // Page after page, in either direction, the tenant's tasks with the word, each once.
  const withWord = (
    await knex('tasks')
      .where('tenant_id', tenantId)
      .where('description', 'needs quixote')
      .orderBy([{ column: 'created_at' }, { column: 'task_id' }])
      .pluck('task_id')
  ).map(String);
  for (const sort of ['created_at', '-created_at'] as const) {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await repositories.tasks.search(tenantId, {
        filter: { all: [{ text: 'quixote' }, { text: 'needs' }] },
        sort,
        limit: 7,
        cursor,
      });
      seen.push(...page.data.map((task) => task.task_id));
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    expect(seen).toEqual(sort === 'created_at' ? withWord : [...withWord].reverse());
  }
});
