/**
 * The planning bench's tenant on MariaDB: `tasks` tasks spread over `projects` projects, written
 * straight into the tables by multi-row INSERTs in big batches, with what the service writes
 * beside a task (its label folds in task_labels, its words' tokens in task_search_words) made by
 * the service's own functions. Seeding a million tasks takes minutes, so the database, named by
 * its size, is kept and used again while its marker says it was seeded with this layout and no
 * migration has come since.
 *
 * Every task is a function of its number: created at even steps over a year (projects taking
 * turns), a status (45 % pending, 25 % in progress, 25 % done, 5 % cancelled), a priority, a due
 * date 0 to 120 days after creation (15 % none), one of four assignees (20 % each; 20 % none),
 * labels each with its own odds, and a title and description of words from a vocabulary of 1,000
 * (each word in about 1 % of the tasks) and, in one task of every `tasks / 1,000`, `rareWord`;
 * `commonWord` ends the description of about 70 % of them.
 */
import type { Knex } from 'knex';
import mysql from 'mysql2/promise';
import { createRepositories } from '../../src/all-repositories';
import { createKnex } from '../../src/db/knex';
import { migrateToLatest } from '../../src/db/migrate';
import { searchWords } from '../../src/db/task-filter';
import { labelFold, labelSet } from '../../src/db/task-planning';
import { nowForDb, toDbTimestamp } from '../../src/db/timestamps';
import { fmt } from './report';
import { dropIndexesFrom } from './table-indexes';

export interface PlanningLayout {
  tasks: number;
  projects: number;
}

/** Raise it when the rows the seed writes change: a kept database of an older layout is seeded again. */
const seedLayout = 4;
const markerTable = 'bench_planning_seed';
export const tenantName = 'planning bench';

export const assignees = [
  'ana@example.com',
  'ben@example.com',
  'chen@example.com',
  'dana@example.com',
];
/** Each label's odds of being on a task, each drawn apart; `Launch` is written capitalised. */
const labelOdds: Array<[string, number]> = [
  ['backend', 0.4],
  ['ops', 0.35],
  ['frontend', 0.3],
  ['bug', 0.25],
  ['Launch', 0.15],
  ['design', 0.12],
  ['docs', 0.1],
  ['security', 0.08],
];
/** In about 1,000 tasks; no word of the vocabulary (made of `syllables`, without a q or an x). */
export const rareWord = 'quixote';
/** In about 70 % of the tasks; no word of the vocabulary either. */
export const commonWord = 'review';
/** The share of tasks with `commonWord`. */
export const commonShare = 0.7;
const syllables = 'ba de fi go hu ka le mi no pu ra se ti vo wu ya zo ce gi lu'.split(' ');
/** 1,000 words of three syllables, spread over the 8,000 there are. */
const vocabulary = Array.from({ length: 1000 }, (_, w) => {
  const n = (w * 7919) % 8000;
  return syllables[n % 20] + syllables[Math.floor(n / 20) % 20] + syllables[Math.floor(n / 400)];
});

const dayMs = 86_400_000;
/** The seeded tasks are created over this year, in order of their number. */
const seededFrom = Date.parse('2025-06-01T00:00:00.000Z');
const seededSpanMs = 360 * dayMs;
/** Tasks per INSERT statement (MariaDB's max_allowed_packet is 16 MB; a batch is under 1 MB). */
const batchSize = 2000;

/** A number in [0, 1) drawn from a task's number and a salt: the same every run. */
function unit(n: number, salt: number): number {
  let x = Math.imul(n ^ Math.imul(salt + 1, 0x9e3779b1), 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return (x >>> 0) / 2 ** 32;
}

const pick = <T>(values: readonly T[], n: number, salt: number) =>
  values[Math.floor(unit(n, salt) * values.length)];

/** A UUID of version 7's shape made from a time and a number: ordered by both, and unique by the number. */
function idOf(ms: number, n: number): string {
  const time = ms.toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8)}-7000-8000-${n.toString(16).padStart(12, '0')}`;
}

const at = (ms: number) => toDbTimestamp(new Date(ms).toISOString());

/** A task's row, in `taskColumns`' order, and the rows the service writes beside it. */
export interface PlannedTask {
  row: unknown[];
  folds: string[];
  searchWords: string;
}

const taskColumns = [
  'task_id',
  'project_id',
  'tenant_id',
  'title',
  'description',
  'status',
  'created_at',
  'updated_at',
  'version',
  'completed_at',
  'priority',
  'due_on',
  'labels',
  'assignee',
];

/** Task number `n` of a tenant's project, created at `createdMs`; with `rareWord` in its description when `rare`. */
export function plannedTask(
  n: number,
  place: { projectId: string; tenantId: string; createdMs: number; rare: boolean },
): PlannedTask {
  const { projectId, tenantId, createdMs, rare } = place;
  const updatedMs = createdMs + Math.floor(unit(n, 1) * 10 * dayMs);
  const u = unit(n, 2);
  const status = u < 0.45 ? 'pending' : u < 0.7 ? 'in_progress' : u < 0.95 ? 'done' : 'cancelled';
  const dueOn =
    unit(n, 3) < 0.15
      ? null
      : new Date(createdMs + Math.floor(unit(n, 4) * 120) * dayMs).toISOString().slice(0, 10);
  const a = unit(n, 5);
  const assignee = a < 0.2 ? null : assignees[Math.min(3, Math.floor((a - 0.2) / 0.2))];
  const labels = labelSet(
    labelOdds.filter(([, odds], k) => unit(n, 10 + k) < odds).map(([label]) => label),
  );
  const word = (salt: number) => pick(vocabulary, n, salt);
  const title = `${word(20).replace(/^./, (c) => c.toUpperCase())} ${word(21)} ${word(22)}`;
  const common = unit(n, 40) < commonShare ? ` ${commonWord}` : '';
  const description = `${Array.from({ length: 8 }, (_, k) => word(30 + k)).join(' ')}${rare ? ` ${rareWord}` : ''}${common}.`;
  return {
    row: [
      idOf(createdMs, n),
      projectId,
      tenantId,
      title,
      description,
      status,
      at(createdMs),
      at(updatedMs),
      1,
      status === 'done' || status === 'cancelled' ? at(updatedMs) : null,
      Math.floor(unit(n, 6) * 5),
      dueOn,
      JSON.stringify(labels),
      assignee,
    ],
    folds: labels.map(labelFold),
    searchWords: searchWords(title, description),
  };
}

/** Writes the tasks and their label folds and words: three multi-row INSERTs. */
export async function insertTasks(
  connection: mysql.Connection,
  tasks: PlannedTask[],
): Promise<void> {
  await connection.query(`insert into tasks (${taskColumns.join(', ')}) values ?`, [
    tasks.map((task) => task.row),
  ]);
  const labels = tasks.flatMap((task) => task.folds.map((fold) => [task.row[0], fold]));
  if (labels.length > 0)
    await connection.query('insert into task_labels (task_id, label_fold) values ?', [labels]);
  const [id, tenant, created] = ['task_id', 'tenant_id', 'created_at'].map((column) =>
    taskColumns.indexOf(column),
  );
  await connection.query(
    'insert into task_search_words (task_id, search_words, tenant_id, created_at) values ?',
    [tasks.map(({ row, searchWords }) => [row[id], searchWords, row[tenant], row[created]])],
  );
}

/** The seed's projects, made a millisecond apart the day before the first task. */
const seededProjectIds = (layout: PlanningLayout) =>
  Array.from({ length: layout.projects }, (_, p) => idOf(seededFrom - dayMs, p));

/** How many of `layout.tasks` have `rareWord`: one in every `stride`. */
export function rareStride(layout: PlanningLayout): number {
  return Math.max(1, Math.floor(layout.tasks / 1000));
}

export interface PlanningDatabase {
  url: string;
  config: { client: 'mysql'; url: string };
  tenantId: string;
  /** The seed's own projects, in the order tasks take turns in. */
  projectIds: string[];
  /** How the seed went: this run's, or the kept one's. */
  seeding: string;
}

/** The database of this layout on the server at `serverUrl`: kept from an earlier run, or seeded now. */
export async function planningDatabase(
  serverUrl: string,
  layout: PlanningLayout,
): Promise<PlanningDatabase> {
  const name = `tt_bench_planning_${layout.tasks}_${layout.projects}`;
  const server = await mysql.createConnection(serverUrl);
  await server.query(`create database if not exists \`${name}\``);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const config = { client: 'mysql' as const, url: url.toString() };
  const knex = createKnex(config);
  try {
    const marker = await keptSeed(knex);
    if (marker === undefined) {
      await server.query(`drop database \`${name}\``);
      await server.query(`create database \`${name}\``);
      return await seed(config, layout);
    }
    return {
      url: config.url,
      config,
      tenantId: marker.tenant_id,
      projectIds: seededProjectIds(layout),
      seeding: `kept from ${marker.seeded_at} UTC: ${marker.seeding}`,
    };
  } finally {
    await knex.destroy();
    await server.end();
  }
}

interface Marker {
  layout: number;
  tenant_id: string;
  seeding: string;
  seeded_at: string;
}

/** The marker of a finished seed of this layout, unless a migration has come since. */
async function keptSeed(knex: Knex): Promise<Marker | undefined> {
  if (!(await knex.schema.hasTable(markerTable))) return undefined;
  const marker: Marker | undefined = await knex(markerTable).first();
  if (marker?.layout !== seedLayout) return undefined;
  const [, pending] = (await knex.migrate.list()) as [unknown[], unknown[]];
  return pending.length === 0 ? marker : undefined;
}

const seconds = (ms: number) => `${fmt(ms / 1000, 1)} s`;

async function seed(
  config: { client: 'mysql'; url: string },
  layout: PlanningLayout,
): Promise<PlanningDatabase> {
  const knex = createKnex(config);
  const connection = await mysql.createConnection(config.url);
  try {
    const started = performance.now();
    await migrateToLatest(knex);
    const { tenant_id: tenantId } = await createRepositories(knex).tenants.findOrCreate(tenantName);
    const projectIds = seededProjectIds(layout);
    await knex.batchInsert(
      'projects',
      projectIds.map((projectId, p) => ({
        project_id: projectId,
        tenant_id: tenantId,
        name: `Project ${p + 1}`,
        description: '',
        created_at: at(seededFrom - dayMs + p),
        updated_at: at(seededFrom - dayMs + p),
        version: 1,
      })),
      1000,
    );
    // Tasks are written in id order; the indexes whose rows land all over are built afterwards.
    const taskIndexes = await dropIndexesFrom(knex, 'tasks', (definition) =>
      definition.includes('`updated_at`'),
    );
    const wordIndex = await dropIndexesFrom(knex, 'task_search_words', () => true);
    // Each row is made to fit its task: the checks would only look up what was just written.
    await connection.query('set foreign_key_checks = 0');
    const stepMs = seededSpanMs / layout.tasks;
    const stride = rareStride(layout);
    const batch = (from: number) =>
      Array.from({ length: Math.min(batchSize, layout.tasks - from) }, (_, k) => {
        const n = from + k;
        return plannedTask(n, {
          projectId: projectIds[n % layout.projects],
          tenantId,
          createdMs: seededFrom + Math.floor(n * stepMs),
          rare: n % stride === stride - 1,
        });
      });
    // The next batch is made while MariaDB writes the last one.
    let writing = Promise.resolve();
    for (let from = 0; from < layout.tasks; from += batchSize) {
      const tasks = batch(from);
      await writing;
      writing = insertTasks(connection, tasks);
    }
    await writing;
    const inserted = performance.now();
    await taskIndexes.rebuild();
    await wordIndex.rebuild();
    const indexed = performance.now();
    await knex.raw('analyze table projects, tasks, task_labels, task_search_words');
    const done = performance.now();
    const seeding =
      `${layout.tasks.toLocaleString('en')} tasks over ${layout.projects.toLocaleString('en')} projects in ${seconds(done - started)}, ` +
      `${fmt(layout.tasks / ((done - started) / 1000))} tasks/s (inserts ${seconds(inserted - started)} in batches of ${batchSize.toLocaleString('en')}, ` +
      `then the indexes ${[...taskIndexes.dropped, ...wordIndex.dropped].join(', ')} built ${seconds(indexed - inserted)}, ANALYZE ${seconds(done - indexed)})`;
    await knex.schema.createTable(markerTable, (table) => {
      table.integer('layout').notNullable();
      table.specificType('tenant_id', 'char(36)').notNullable();
      table.string('seeding', 1000).notNullable();
      table.string('seeded_at', 23).notNullable();
    });
    await knex(markerTable).insert({
      layout: seedLayout,
      tenant_id: tenantId,
      seeding,
      seeded_at: nowForDb(),
    });
    return { url: config.url, config, tenantId, projectIds, seeding: `seeded now: ${seeding}` };
  } finally {
    await connection.end();
    await knex.destroy();
  }
}
