/**
 * The scale check of `make bench`: one project of a million tasks beside others on MariaDB,
 * served by the real service in a process of its own. It measures over HTTP whether a deep page
 * of the task list (90% of the way down) costs what page 1 costs, for every sort with and
 * without a status filter, and whether creating a task slows down once the project is large.
 * Prints figures and the targets they meet; it fails only on wrong answers.
 *
 * BENCH_MYSQL_URL (default mysql://root@127.0.0.1:3306/), BENCH_CONNECTIONS (16),
 * BENCH_SECONDS per create run (5), BENCH_WARMUP_SECONDS (3).
 */
import os from 'node:os';
import type { Knex } from 'knex';
import type { DatabaseConfig } from '../../src/config';
import { createRepositories } from '../../src/all-repositories';
import { encodeCursor } from '../../src/db/keyset';
import type { DbTimestamp } from '../../src/db/timestamps';
import { createMysqlDatabase } from '../support/mysql-database';
import { seedFixture, withKnex, type Fixture } from './fixture';
import { drive, type LoadResult, type Operation } from './load';
import { serviceArguments, startServerProcess, type ServerProcess } from './processes';
import { fmt, mark } from './report';
import { dropIndexesFrom } from './table-indexes';

const settings = {
  mysqlUrl: process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/',
  connections: Number(process.env.BENCH_CONNECTIONS ?? 16),
  seconds: Number(process.env.BENCH_SECONDS ?? 5),
  warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 3),
};
type MysqlConfig = Extract<DatabaseConfig, { client: 'mysql' }>;

const bigProjectTasks = 1_000_000;
const neighbourTasks = 100_000;
/** Rows per INSERT ... SELECT: one statement (and transaction) per chunk keeps the undo log small. */
const chunkRows = 100_000;
const pageLimit = 50;
/** A deep page continues after this share of its list. */
const deepShare = 0.9;
const warmupRequests = 5;
const measuredRequests = 30;
/** The deep page may cost at most this much more than page 1. */
const deepRatioTarget = 1.2;

const sorts = ['created_at', '-created_at', 'updated_at', '-updated_at'] as const;
type Sort = (typeof sorts)[number];
interface Filter {
  name: string;
  statuses: string[];
}
const filters: Filter[] = [
  { name: 'none', statuses: [] },
  { name: 'status=pending', statuses: ['pending'] },
  { name: 'status=pending&status=in_progress', statuses: ['pending', 'in_progress'] },
];

/**
 * The rows of one project made by the SEQUENCE engine, seq 1..count: created_at climbs by
 * stepMs from createdFrom, updated_at is a permutation of the same steps from updatedFrom (seq
 * times a prime coprime to count, modulo count), so the two sorts disagree. A project's offsetMs
 * keeps its instants apart from those of the projects whose steps interleave with its own.
 */
interface SeededProject {
  projectId: string;
  /** The first 24 characters of its ids (8-4-4-4-); the last 12 are seq in hex, so ids are unique across projects. */
  idPrefix: string;
  count: number;
  stepMs: number;
  offsetMs: number;
}

/** Every project spans the same hours, so the neighbours' rows sit between the big project's in both orders. */
const createdFrom = '2026-01-01 00:00:00.000';
const updatedFrom = '2026-02-01 00:00:00.000';
const spanMs = 10_000_000;

const seconds = (ms: number) => `${fmt(ms / 1000, 1)} s`;

/** A fifth pending, a tenth in progress, the rest done: a filter that keeps a minority. */
const statusSql =
  "case when seq % 10 < 2 then 'pending' when seq % 10 < 3 then 'in_progress' else 'done' end";

async function insertChunk(
  knex: Knex,
  project: SeededProject,
  from: number,
  to: number,
): Promise<void> {
  await knex.raw(
    `insert into tasks (task_id, project_id, title, description, status, created_at, updated_at, version)
     select concat(?, lower(lpad(hex(seq), 12, '0'))), ?, concat('task ', seq), null, ${statusSql},
       timestamp(?) + interval (seq * ? + ?) * 1000 microsecond,
       timestamp(?) + interval ((seq * 7919) % ? * ? + ?) * 1000 microsecond,
       1
     from seq_${from}_to_${to}`,
    [
      project.idPrefix,
      project.projectId,
      createdFrom,
      project.stepMs,
      project.offsetMs,
      updatedFrom,
      project.count,
      project.stepMs,
      project.offsetMs,
    ],
  );
}

/** Inserts the project's rows a chunk at a time; the time of each chunk, in ms. */
async function seedProject(knex: Knex, project: SeededProject): Promise<number[]> {
  const chunkMs: number[] = [];
  for (let from = 1; from <= project.count; from += chunkRows) {
    const started = performance.now();
    await insertChunk(knex, project, from, Math.min(from + chunkRows - 1, project.count));
    chunkMs.push(performance.now() - started);
  }
  return chunkMs;
}

/**
 * The fixture's tenant, key and projects (the listed one is made the big one), a second
 * project of that tenant and one of another tenant beside it; no tasks yet.
 */
async function seedProjects(knex: Knex): Promise<{ fixture: Fixture; neighbourIds: string[] }> {
  const fixture = await seedFixture(knex, 0);
  const repositories = createRepositories(knex);
  const { tenant_id: tenantId } = await repositories.tenants.findOrCreate('bench');
  const { tenant_id: otherTenantId } =
    await repositories.tenants.findOrCreate('scale other tenant');
  const neighbourIds: string[] = [];
  for (const [owner, name] of [
    [tenantId, 'neighbour 1'],
    [tenantId, 'neighbour 2'],
    [otherTenantId, "another tenant's"],
  ]) {
    neighbourIds.push(
      (
        await repositories.inTransaction('fixture', (write) =>
          repositories.projects.create(owner, { name, description: '' }, write),
        )
      ).value.project_id,
    );
  }
  return { fixture, neighbourIds };
}

/**
 * The seed writes updated_at in a scrambled order, so each row lands on a random page of the
 * indexes on updated_at; once those outgrow the buffer pool (128 MB by default) every chunk
 * waits on the disk. With them in place the million rows took about 2 minutes on a 2-core
 * machine, the chunks slowing from 2 s to 33 s; dropped, then rebuilt by a sort, about 20 s.
 */
const dropUpdatedAtIndexes = (knex: Knex) =>
  dropIndexesFrom(knex, 'tasks', (definition) => definition.includes('`updated_at`'));

/** Fills the big project and its neighbours, then has MariaDB re-read the statistics; prints how long each part took. */
async function seedTasks(knex: Knex, bigProjectId: string, neighbourIds: string[]): Promise<void> {
  const big: SeededProject = {
    projectId: bigProjectId,
    idPrefix: '00000001-0000-4000-8000-',
    count: bigProjectTasks,
    stepMs: spanMs / bigProjectTasks,
    offsetMs: 0,
  };
  const neighbours = neighbourIds.map((projectId, i): SeededProject => ({
    projectId,
    idPrefix: `0000000${i + 2}-0000-4000-8000-`,
    count: neighbourTasks,
    stepMs: spanMs / neighbourTasks,
    offsetMs: i + 1,
  }));
  const started = performance.now();
  const indexes = await dropUpdatedAtIndexes(knex);
  const bigChunks = await seedProject(knex, big);
  for (const neighbour of neighbours) await seedProject(knex, neighbour);
  const inserted = performance.now();
  await indexes.rebuild();
  const indexed = performance.now();
  await knex.raw('analyze table tasks');
  const analyzed = performance.now();
  const total = bigProjectTasks + neighbours.length * neighbourTasks;
  console.log(`\n## Seeding\n`);
  console.log(
    `- ${total.toLocaleString('en')} tasks (${bigProjectTasks.toLocaleString('en')} in one project, ${neighbours.length} × ${neighbourTasks.toLocaleString('en')} beside it) ` +
      `in chunks of ${chunkRows.toLocaleString('en')}, with ${indexes.dropped.join(', ')} dropped meanwhile: ${seconds(analyzed - started)} ` +
      `(inserts ${seconds(inserted - started)}, rebuilding the indexes ${seconds(indexed - inserted)}, ANALYZE ${seconds(analyzed - indexed)})`,
  );
  console.log(`- the big project's chunks, first to last: ${bigChunks.map(seconds).join(', ')}`);
}

function cursorAfter(sort: Sort, at: DbTimestamp, id: string): string {
  return encodeCursor(
    {
      column: sort.replace('-', '') as 'created_at' | 'updated_at',
      descending: sort.startsWith('-'),
    },
    { at, id },
  );
}

interface DeepPage {
  /** 1-based position in the list of the row the page continues after. */
  after: number;
  cursor: string;
  /** The row the deep page must start with. */
  expectedFirstId: string;
}

/** Finds the row 90% of the way down the list once, by OFFSET in SQL (slow, but only here), and the one after it. */
async function findDeepPage(
  knex: Knex,
  projectId: string,
  sort: Sort,
  filter: Filter,
): Promise<DeepPage> {
  const column = sort.replace('-', '');
  const order = sort.startsWith('-') ? 'desc' : 'asc';
  const listed = () =>
    knex('tasks')
      .where('project_id', projectId)
      .modify((q) => filter.statuses.length > 0 && q.whereIn('status', filter.statuses));
  const [{ count }] = await listed().count({ count: '*' });
  const after = Math.floor(Number(count) * deepShare);
  const rows: Array<Record<string, string>> = await listed()
    .select(column, 'task_id')
    .orderBy([
      { column, order },
      { column: 'task_id', order },
    ])
    .offset(after - 1)
    .limit(2);
  if (rows.length !== 2) throw new Error(`${sort} ${filter.name}: no row after position ${after}`);
  return {
    after,
    cursor: cursorAfter(sort, rows[0][column], rows[0].task_id),
    expectedFirstId: rows[1].task_id,
  };
}

interface TaskItem {
  task_id: string;
  project_id: string;
  status: string;
}

/** One page over HTTP, timed from request to parsed body; throws on anything but a full page of the project's (filtered) tasks. */
async function fetchPage(
  service: ServerProcess,
  key: string,
  requestPath: string,
  projectId: string,
  filter: Filter,
): Promise<{ ms: number; firstId: string }> {
  const started = performance.now();
  const response = await fetch(service.url + requestPath, {
    headers: { Authorization: `Bearer ${key}` },
  });
  const body = (await response.json()) as { data?: TaskItem[] };
  const ms = performance.now() - started;
  const items = body.data ?? [];
  const wrong = items.find(
    (item) =>
      item.project_id !== projectId ||
      (filter.statuses.length > 0 && !filter.statuses.includes(item.status)),
  );
  if (response.status !== 200 || items.length !== pageLimit || wrong) {
    throw new Error(
      `GET ${requestPath}: ${response.status}, ${items.length} items${wrong ? `, ${JSON.stringify(wrong)} does not belong` : ''}`,
    );
  }
  return { ms, firstId: items[0].task_id };
}

/** Nearest-rank quantile. */
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(q * sorted.length) - 1];
}

interface ListFigures {
  sort: Sort;
  filter: Filter;
  deepAfter: number;
  page1: number[];
  deep: number[];
}

/** Page 1 and the deep page, alternated after a warm-up so drift hits both alike; checks the deep page is the right one. */
async function measureList(
  service: ServerProcess,
  knex: Knex,
  key: string,
  projectId: string,
  sort: Sort,
  filter: Filter,
): Promise<ListFigures> {
  const deepPage = await findDeepPage(knex, projectId, sort, filter);
  const base = `/v1/projects/${projectId}/tasks?limit=${pageLimit}&sort=${sort}${filter.statuses.map((status) => `&status=${status}`).join('')}`;
  const deepPath = `${base}&cursor=${deepPage.cursor}`;
  const figures: ListFigures = { sort, filter, deepAfter: deepPage.after, page1: [], deep: [] };
  for (let i = 0; i < warmupRequests + measuredRequests; i++) {
    const page1 = await fetchPage(service, key, base, projectId, filter);
    const deep = await fetchPage(service, key, deepPath, projectId, filter);
    if (deep.firstId === page1.firstId || deep.firstId !== deepPage.expectedFirstId) {
      throw new Error(
        `${sort} ${filter.name}: the deep page starts with ${deep.firstId}, expected ${deepPage.expectedFirstId} (page 1 starts with ${page1.firstId})`,
      );
    }
    if (i < warmupRequests) continue;
    figures.page1.push(page1.ms);
    figures.deep.push(deep.ms);
  }
  return figures;
}

function printListTable(rows: ListFigures[]): void {
  console.log(
    `\n## Task list of the ${bigProjectTasks.toLocaleString('en')}-task project: page 1 against a deep page (limit ${pageLimit}, ${measuredRequests} sequential requests each after ${warmupRequests} warm-up)\n`,
  );
  console.log(
    `| sort | filter | deep page after row | page 1 median ms | deep page median ms | ratio deep/page1 (≤ ${deepRatioTarget}) | page 1 / deep p90 ms |`,
  );
  console.log('|---|---|---:|---:|---:|---:|---:|');
  for (const { sort, filter, deepAfter, page1, deep } of rows) {
    const ratio = quantile(deep, 0.5) / quantile(page1, 0.5);
    console.log(
      `| ${sort} | ${filter.name} | ${deepAfter.toLocaleString('en')} | ${fmt(quantile(page1, 0.5), 1)} | ${fmt(quantile(deep, 0.5), 1)} | ` +
        `${fmt(ratio, 2)} ${mark(ratio <= deepRatioTarget)} | ${fmt(quantile(page1, 0.9), 1)} / ${fmt(quantile(deep, 0.9), 1)} |`,
    );
  }
}

/** createTask into one project, as fast as answered, after a warm-up. */
async function measureCreate(
  service: ServerProcess,
  key: string,
  projectId: string,
): Promise<LoadResult> {
  const body = JSON.stringify({
    project_id: projectId,
    title: 'Write the scale report',
    description: 'With the figures.',
  });
  const operation: Operation = {
    name: 'createTask',
    next: () => ({ method: 'POST', path: '/v1/tasks', body }),
  };
  const load = { connections: settings.connections, seconds: settings.seconds };
  await drive(service.url, key, operation, { ...load, seconds: settings.warmupSeconds });
  return drive(service.url, key, operation, load);
}

function printCreateTable(empty: LoadResult, full: LoadResult): void {
  console.log(
    `\n## createTask: into an empty project of an empty table, then into the ${bigProjectTasks.toLocaleString('en')}-task project\n`,
  );
  console.log('| project | req/s | p50 / p99 ms |');
  console.log('|---|---:|---:|');
  console.log(
    `| empty | ${fmt(empty.requestsPerSecond)} | ${fmt(empty.p50Ms)} / ${fmt(empty.p99Ms)} |`,
  );
  console.log(
    `| ${bigProjectTasks.toLocaleString('en')} tasks | ${fmt(full.requestsPerSecond)} | ${fmt(full.p50Ms)} / ${fmt(full.p99Ms)} |`,
  );
  console.log(
    `\nratio at ${bigProjectTasks.toLocaleString('en')} / at 0: req/s ${fmt(full.requestsPerSecond / empty.requestsPerSecond, 2)}, p99 ${fmt(full.p99Ms / empty.p99Ms, 2)}`,
  );
}

/**
 * The service starts on the migrated, empty database, so the first createTask run sees an
 * empty table; then the tasks go in beneath it, and the list and the second run follow.
 */
async function checkScale(database: MysqlConfig): Promise<void> {
  await withKnex(database, async (knex) => {
    const { fixture, neighbourIds } = await seedProjects(knex);
    const service = await startServerProcess(serviceArguments(), {
      DATABASE_URL: database.url,
      RATE_LIMIT_PER_MINUTE: '999999999',
    });
    try {
      const createEmpty = await measureCreate(service, fixture.key, fixture.emptyProjectId);
      await seedTasks(knex, fixture.listedProjectId, neighbourIds);
      const lists: ListFigures[] = [];
      for (const sort of sorts) {
        for (const filter of filters)
          lists.push(
            await measureList(service, knex, fixture.key, fixture.listedProjectId, sort, filter),
          );
      }
      printListTable(lists);
      // Last, as it adds tasks to the listed project.
      const createFull = await measureCreate(service, fixture.key, fixture.listedProjectId);
      printCreateTable(createEmpty, createFull);
    } finally {
      await service.stop();
    }
  });
}

async function main(): Promise<void> {
  const cpus = os.cpus();
  console.log(`# task-tracker scale check, ${new Date().toISOString()}`);
  console.log(
    `${cpus.length} × ${cpus[0].model}, ${fmt(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; MariaDB at ${new URL(settings.mysqlUrl).host}; ` +
      `createTask: autocannon ${settings.connections} connections, ${settings.warmupSeconds} s warm-up, ${settings.seconds} s measured.`,
  );
  const database = await createMysqlDatabase(settings.mysqlUrl, 'tt_scale');
  try {
    await checkScale(database.config as MysqlConfig);
  } finally {
    await database.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
