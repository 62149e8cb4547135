/**
 * `make bench`, planning part (issue 46), on MariaDB: one tenant with BENCH_PLANNING_TASKS tasks
 * (1,000,000) over BENCH_PLANNING_PROJECTS projects (1,000), seeded by planning-seed.ts and kept
 * between runs, served by the service in a process of its own. Prints figures and the targets
 * they meet; it fails only on wrong answers.
 * 1. Searches (POST /v1/tasks/search, pages of 50) at a fixed low concurrency: by assignee,
 *    status and a due_on range, and by two labels, the first page against the 1,000th (its
 *    cursor found once by walking the pages); by `text`, a word in about 1,000 tasks, and one in
 *    about 70 % of them.
 * 2. A bulk update of 1,000 tasks by filter, its events in the feed and at a webhook endpoint
 *    (planning-bulk.ts).
 * 3. What an endpoint's filter of 10 conditions adds to a delivery's CPU (planning-filter-cpu.ts).
 *
 * BENCH_MYSQL_URL, BENCH_PLANNING_CONNECTIONS (2), BENCH_PLANNING_REQUESTS (200 of each page,
 * after BENCH_PLANNING_WARMUP, 20, or fewer when BENCH_PLANNING_MEASURE_SECONDS, 120, have passed),
 * BENCH_PLANNING_DEEP_PAGE (1000; the walk to it stops at the page reached after
 * BENCH_PLANNING_WALK_SECONDS, 300, so that a slow search still ends), BENCH_PLANNING_PARTS
 * (search,bulk,filter: those to run), BENCH_PLANNING_SEARCHES (assignee,labels,text,common: the
 * searches to run), and the filter part's own (planning-filter-cpu.ts).
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/api';
import { issueApiKey } from '../../src/cli/issue-api-key';
import { createRepositories } from '../../src/all-repositories';
import { taskMatches, whereTaskFilter, type TaskFilter } from '../../src/db/task-filter';
import { ApiError, apiClient, type ApiCall } from './api-client';
import { withKnex } from './fixture';
import { benchBulkUpdate } from './planning-bulk';
import { benchFilterCpu } from './planning-filter-cpu';
import {
  assignees,
  commonShare,
  commonWord,
  planningDatabase,
  rareStride,
  rareWord,
  tenantName,
  type PlanningLayout,
} from './planning-seed';
import { serviceArguments, startServerProcess } from './processes';
import { startReceiver } from './receiver';
import { fmt, mark, quantile } from './report';

type Task = components['schemas']['Task'];
type TaskPage = components['schemas']['TaskPage'];

const settings = {
  mysqlUrl: process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/',
  layout: {
    tasks: Number(process.env.BENCH_PLANNING_TASKS ?? 1_000_000),
    projects: Number(process.env.BENCH_PLANNING_PROJECTS ?? 1000),
  } satisfies PlanningLayout,
  connections: Number(process.env.BENCH_PLANNING_CONNECTIONS ?? 2),
  requests: Number(process.env.BENCH_PLANNING_REQUESTS ?? 200),
  warmup: Number(process.env.BENCH_PLANNING_WARMUP ?? 20),
  deepPage: Number(process.env.BENCH_PLANNING_DEEP_PAGE ?? 1000),
  walkSeconds: Number(process.env.BENCH_PLANNING_WALK_SECONDS ?? 300),
  measureSeconds: Number(process.env.BENCH_PLANNING_MEASURE_SECONDS ?? 120),
  parts: (process.env.BENCH_PLANNING_PARTS ?? 'search,bulk,filter').split(','),
  searches: (process.env.BENCH_PLANNING_SEARCHES ?? 'assignee,labels,text,common').split(','),
};
const pageLimit = 50;
/** Issue 46's targets. */
const p99TargetMs = 50;
const deepRatioTarget = 1.2;

interface Search {
  /** Its name in BENCH_PLANNING_SEARCHES. */
  key: string;
  name: string;
  filter: TaskFilter;
  /** Whether the deep page is measured too (not for text: its target is the first page's). */
  deep: boolean;
}

const searches: Search[] = [
  {
    key: 'assignee',
    name: 'assignee + status + due_on range',
    filter: {
      all: [
        { assignee: { eq: assignees[0] } },
        { status: { in: ['pending', 'in_progress'] } },
        { due_on: { gte: '2025-08-01', lt: '2026-05-01' } },
      ],
    },
    deep: true,
  },
  {
    key: 'labels',
    name: 'two labels',
    filter: { labels: { has_all: ['backend', 'ops'] } },
    deep: true,
  },
  { key: 'text', name: `text, "${rareWord}"`, filter: { text: rareWord }, deep: false },
  { key: 'common', name: `text, "${commonWord}"`, filter: { text: commonWord }, deep: false },
];

/** One page of a search, from sending to the parsed answer. */
async function searchPage(call: ApiCall, filter: TaskFilter, cursor?: string) {
  const { body, ms } = await call<TaskPage>('POST', '/v1/tasks/search', {
    filter,
    limit: pageLimit,
    ...(cursor !== undefined && { cursor }),
  });
  return { ms, tasks: body.data, next: body.next_cursor };
}

interface PageAt {
  page: number;
  /** The cursor that asks for it (none for the first). */
  cursor?: string;
  firstId: string;
  size: number;
}

const byOrder = (a: Task, b: Task) =>
  a.created_at < b.created_at || (a.created_at === b.created_at && a.task_id < b.task_id);

/**
 * Follows the cursors from the first page to page `deepPage`, or to the last full page before
 * it, or to the page reached in `walkSeconds`; throws unless every task matches the filter, none
 * comes twice and they come in order.
 */
async function walk(
  call: ApiCall,
  search: Search,
): Promise<{ first: PageAt; deep: PageAt; stopped: 'page' | 'end' | 'time' }> {
  const deadline = performance.now() + settings.walkSeconds * 1000;
  const seen = new Set<string>();
  let previous: Task | undefined;
  let cursor: string | undefined;
  let first: PageAt | undefined;
  let deep: PageAt | undefined;
  let stopped: 'page' | 'end' | 'time' = 'page';
  for (let page = 1; page <= (search.deep ? settings.deepPage : 1); page++) {
    const { tasks, next } = await searchPage(call, search.filter, cursor);
    for (const task of tasks) {
      if (seen.has(task.task_id) || !taskMatches(search.filter, task))
        throw new Error(`${search.name}, page ${page}: ${JSON.stringify(task)} does not belong`);
      if (previous !== undefined && !byOrder(previous, task))
        throw new Error(`${search.name}, page ${page}: ${task.task_id} out of order`);
      seen.add(task.task_id);
      previous = task;
    }
    if (tasks.length < pageLimit) stopped = 'end';
    if (tasks.length === 0) break;
    const at = { page, cursor, firstId: tasks[0].task_id, size: tasks.length };
    first ??= at;
    if (tasks.length === pageLimit) deep = at;
    if (next === null) stopped = 'end';
    else if (performance.now() > deadline && page < settings.deepPage) stopped = 'time';
    if (stopped !== 'page' || next === null) break;
    cursor = next;
  }
  if (first === undefined) throw new Error(`${search.name}: no task matches`);
  return { first, deep: deep ?? first, stopped };
}

/**
 * The times of each page, `settings.requests` of each after the warm-up, at
 * `settings.connections` at once, each connection asking for the pages in turn so that drift
 * hits them alike; throws unless each answer starts where it should.
 */
async function timePages(call: ApiCall, search: Search, pages: PageAt[]): Promise<number[][]> {
  const times: number[][] = pages.map(() => []);
  const deadline = performance.now() + settings.measureSeconds * 1000;
  let started = 0;
  const client = async () => {
    while (started++ < settings.warmup + settings.requests && performance.now() < deadline) {
      const measured = started > settings.warmup;
      for (const [i, page] of pages.entries()) {
        const { ms, tasks } = await searchPage(call, search.filter, page.cursor);
        if (tasks[0]?.task_id !== page.firstId || tasks.length !== page.size)
          throw new Error(`${search.name}: page ${page.page} changed between requests`);
        if (measured) times[i].push(ms);
      }
    }
  };
  await Promise.all(Array.from({ length: settings.connections }, client));
  return times;
}

/** How many of the tenant's tasks match: the service's own SQL for the filter, counted. */
async function matching(knex: Knex, tenantId: string, filter: TaskFilter): Promise<number> {
  const tenantsTasks = knex('tasks').whereIn(
    'tasks.project_id',
    knex('projects').select('project_id').where('tenant_id', tenantId),
  );
  const [{ n }] = await whereTaskFilter(tenantsTasks, filter).count({ n: '*' });
  return Number(n);
}

/** One search's row of the table. */
async function searchRow(call: ApiCall, knex: Knex, tenantId: string, search: Search) {
  const matched = (await matching(knex, tenantId, search.filter)).toLocaleString('en');
  const p = (times: number[], q: number) => quantile(times, q);
  const timesCells = (times: number[]) =>
    `${fmt(p(times, 0.5), 1)} / ${fmt(p(times, 0.99), 1)} | ${mark(p(times, 0.99) < p99TargetMs)}`;
  try {
    const walkStarted = performance.now();
    const { first, deep, stopped } = await walk(call, search);
    const walkS = (performance.now() - walkStarted) / 1000;
    const [firstMs, deepMs] = await timePages(call, search, search.deep ? [first, deep] : [first]);
    if (!search.deep)
      return `| ${search.name} | ${matched} | ${firstMs.length} | ${timesCells(firstMs)} | | | | | |`;
    const ratio = p(deepMs, 0.5) / p(firstMs, 0.5);
    const why = {
      page: '',
      end: ' (the last full page)',
      time: ` (the walk's ${settings.walkSeconds} s ran out)`,
    };
    return (
      `| ${search.name} | ${matched} | ${firstMs.length} | ${timesCells(firstMs)} | ` +
      `${deep.page.toLocaleString('en')}${why[stopped]}, walked in ${fmt(walkS, 1)} s | ${timesCells(deepMs)} | ` +
      `${fmt(ratio, 2)} ${mark(ratio <= deepRatioTarget)} | ${fmt(p(deepMs, 0.99) / p(firstMs, 0.99), 2)} |`
    );
  } catch (error) {
    // A statement past DATABASE_STATEMENT_TIMEOUT_SECONDS: a search too slow to measure, not a wrong answer.
    if (!(error instanceof ApiError) || error.status !== 503) throw error;
    return `| ${search.name} | ${matched} | | **503: ${error.message.slice(0, 200)}** | | | | | |`;
  }
}

async function benchSearches(call: ApiCall, knex: Knex, tenantId: string): Promise<void> {
  const rows: string[] = [];
  for (const search of searches.filter((s) => settings.searches.includes(s.key)))
    rows.push(await searchRow(call, knex, tenantId, search));
  console.log(
    `\n### Search (POST /v1/tasks/search, pages of ${pageLimit}, sorted by created_at)\n\n` +
      `${settings.connections} connections, ${settings.requests} requests of each page (or as many as ${settings.measureSeconds} s allow) after ${settings.warmup} of warm-up, the pages asked for in turn; ` +
      'each timed from sending to the parsed answer. The deep page is reached once by following the cursors, checking every task on the way.\n',
  );
  console.log(
    `| search | tasks matched | requests of each page | page 1 p50 / p99 ms | p99 < ${p99TargetMs} ms | deep page | its p50 / p99 ms | p99 < ${p99TargetMs} ms | p50 ratio deep / page 1 (≤ ${deepRatioTarget}) | p99 ratio |`,
  );
  console.log('|---|---:|---:|---:|---|---|---:|---|---:|---:|');
  for (const row of rows) console.log(row);
}

async function main(): Promise<void> {
  const { layout } = settings;
  console.log(
    `\n## MariaDB: planning with tasks (issue 46), a tenant with ${layout.tasks.toLocaleString('en')} tasks over ${layout.projects.toLocaleString('en')} projects\n`,
  );
  const database = await planningDatabase(settings.mysqlUrl, layout);
  console.log(
    `Seeding (multi-row INSERTs straight into the tables; kept for the next run): ${database.seeding}. ` +
      `"${rareWord}" is in ${Math.floor(layout.tasks / rareStride(layout)).toLocaleString('en')} tasks, ` +
      `"${commonWord}" in about ${commonShare * 100} % of them.`,
  );
  const receiver = await startReceiver();
  try {
    await withKnex(database.config, async (knex) => {
      const { key } = await issueApiKey(createRepositories(knex), tenantName, ['read', 'write']);
      const service = await startServerProcess(serviceArguments(), {
        DATABASE_URL: database.url,
        RATE_LIMIT_PER_MINUTE: '999999999',
        LOG_LEVEL: 'info',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      });
      try {
        const call = apiClient(service.url, key);
        if (settings.parts.includes('search')) await benchSearches(call, knex, database.tenantId);
        if (settings.parts.includes('bulk'))
          await benchBulkUpdate({ call, knex, database, receiver });
      } finally {
        await service.stop();
      }
    });
    if (settings.parts.includes('filter')) await benchFilterCpu(settings.mysqlUrl, receiver);
  } finally {
    await receiver.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
