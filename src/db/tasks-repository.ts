import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import type { components, operations } from '../../generated/api';
import { UnknownProjectError } from '../errors';
import { compileSelect } from './compiled-select';
import { isForeignKeyViolation, isNullViolation, translatingErrors } from './database-errors';
import type { EventLog } from './event-log';
import { selectPage } from './keyset';
import {
  hasText,
  labelsOfTask,
  onlyText,
  requiredText,
  searchWords,
  whereTaskFilter,
  whereWords,
  wordsOnly,
  type TaskFilter,
  type TextLookup,
} from './task-filter';
import { taskOrder, type TaskSort } from './task-order';
import { fromDbTimestamp, nowForDb, type DbTimestamp } from './timestamps';
import type { Transaction, WriteContext } from './transactions';
import { recordedChanges } from './recorded-changes';
import { completedAt } from './task-completion';
import { labelFold, labelSet, priorityOfRank, priorityRank } from './task-planning';
import { lockingRead, type VersionCondition, type Versioned } from './versioned';

type Task = components['schemas']['Task'];
type TaskPage = components['schemas']['TaskPage'];
type TaskCreate = components['schemas']['TaskCreate'];
type TaskUpdate = components['schemas']['TaskUpdate'];
type TaskStatus = components['schemas']['TaskStatus'];
type ListParameters = NonNullable<operations['listProjectTasks']['parameters']['query']>;

/** A list's query as validation leaves it: `sort` and `limit` filled in with their defaults. */
type TaskListQuery = Omit<ListParameters, 'sort' | 'limit'> & {
  sort: TaskSort;
  limit: number;
};

interface TaskSearchQuery {
  filter: TaskFilter;
  /** The lists' orders: TaskSearch's `sort` has the same values as TaskSort. */
  sort: TaskSort;
  limit: number;
  cursor?: string;
}

/** A task as its row holds it; a bulk change (tasks-bulk-repository.ts) reads the same rows. */
export interface TaskRow {
  task_id: string;
  project_id: string;
  /** The project's (task-tenants.ts). */
  tenant_id: string;
  title: string;
  description: string | null;
  status: TaskStatus;
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
  completed_at: DbTimestamp | null;
  /** The priority's rank (task-planning.ts). */
  priority: number;
  /** 'YYYY-MM-DD' on both databases. */
  due_on: string | null;
  /** The labels as JSON, sorted by fold, in their first spelling. */
  labels: string;
  assignee: string | null;
  version: number;
  [column: string]: unknown;
}

/** The columns a list reads: what a task shows, and nothing only writes use (version, tenant_id). */
const listedColumns = [
  'task_id',
  'project_id',
  'title',
  'description',
  'status',
  'created_at',
  'updated_at',
  'completed_at',
  'priority',
  'due_on',
  'labels',
  'assignee',
].map((column) => `tasks.${column}`);

function versioned(row: TaskRow): Versioned<Task> {
  return { value: toTask(row), version: row.version };
}

export function toTask(row: TaskRow): Task {
  return {
    task_id: row.task_id,
    project_id: row.project_id,
    title: row.title,
    description: row.description,
    status: row.status,
    created_at: fromDbTimestamp(row.created_at),
    updated_at: fromDbTimestamp(row.updated_at),
    completed_at: row.completed_at === null ? null : fromDbTimestamp(row.completed_at),
    priority: priorityOfRank(row.priority),
    due_on: row.due_on,
    labels: JSON.parse(row.labels) as string[],
    assignee: row.assignee,
  };
}

const insertedColumns = [
  'task_id',
  'project_id',
  'tenant_id',
  'title',
  'description',
  'status',
  'created_at',
  'updated_at',
  'priority',
  'due_on',
  'labels',
  'assignee',
  'version',
] as const;

/**
 * One statement that fails unless the tenant has the project: the project's id is read from the
 * tenant's projects inside the insert, so for any other project it is NULL, which the column
 * refuses (and a project deleted meanwhile fails the foreign key). Failing, rather than inserting
 * no row, is what lets it go unanswered in one packet with the event's insert and COMMIT: the
 * statements after a failed one never run.
 */
const insertIntoProjectOfTenant =
  `insert into tasks (${insertedColumns.join(', ')}) values (` +
  insertedColumns
    .map((column) =>
      column === 'project_id'
        ? '(select project_id from projects where project_id = ? and tenant_id = ?)'
        : '?',
    )
    .join(', ') +
  ')';

/** How many of a tenant's newest tasks a search with `text` tries its filter on… */
const textSampleSize = 500;
/** …and how many of them must match for its words to be looked up in each task it reads. */
const textProbesFrom = 4;

/**
 * How a search finds its `text` (TextLookup): through the full-text index, unless its filter
 * matches enough of the tenant's newest tasks that a read of the tenant's tasks in the page's
 * order, probing each, fills a page sooner. On MariaDB 10.11 at a million tasks the full-text
 * index costs about 12 µs for each task with the words, of every tenant (13 ms a page for a word
 * in 1,000 tasks, 136 ms in 10,000, seconds for a word in most tasks); a probe about 2.6 µs for
 * each task read, the page's size over the share that matches. The two meet near 0.3 % for a
 * tenant of a million tasks; 4 of 500 (0.8 %, a page in about 6,000 probes, ~17 ms) keeps a word
 * in 0.1 % from being probed by the luck of the sample (about 1 time in 500), which would read
 * 50,000 tasks. One statement on the newest 500 (1.5 to 3 ms; for a common word, its first few),
 * and only when the filter has `text`; a second, of its required words alone, when the filter
 * has more and matched too few.
 */
async function textLookup(knex: Knex, tenantId: string, filter: TaskFilter): Promise<TextLookup> {
  if (!hasText(filter)) return 'index';
  if (await inNewest(knex, tenantId, filter)) return 'probe';
  // Words in many tasks, which the rest of the filter makes few: the full-text index would still
  // read all the words' tasks, while a read through the rest's index probes only its own.
  const words = requiredText(filter);
  if (words.length === 0 || onlyText(filter)) return 'index';
  return (await inNewest(knex, tenantId, { all: words })) ? 'probe' : 'index';
}

/** Whether the filter matches at least textProbesFrom of the tenant's newest textSampleSize tasks. */
async function inNewest(knex: Knex, tenantId: string, filter: TaskFilter): Promise<boolean> {
  const newest = knex('tasks')
    .select('task_id')
    .where('tenant_id', tenantId)
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'task_id', order: 'desc' },
    ])
    .limit(textSampleSize);
  // A filter of words alone needs no more of a task than its id, which the index holds.
  const sample: Knex.QueryBuilder = onlyText(filter)
    ? knex.from(newest.as('tasks'))
    : knex('tasks').join(newest.as('newest'), 'newest.task_id', 'tasks.task_id');
  // Counted up to textProbesFrom: a word in most tasks is decided on the first few.
  const found = whereTaskFilter(sample.select('tasks.task_id'), filter, 'probe')
    .limit(textProbesFrom)
    .as('found');
  const [{ n }] = await knex.from(found).count({ n: '*' });
  return Number(n) >= textProbesFrom;
}

export function tasksRepository(knex: Knex, events: EventLog) {
  const ofTenant = (tenantId: string, taskId: string) =>
    knex('tasks')
      .where('task_id', taskId)
      .whereIn('project_id', knex('projects').select('project_id').where('tenant_id', tenantId));
  const selectTaskOfTenant = compileSelect(knex, ['tenantId', 'taskId'], ({ tenantId, taskId }) =>
    ofTenant(tenantId, taskId).first(),
  );
  const lockTaskOfTenant = compileSelect(knex, ['tenantId', 'taskId'], ({ tenantId, taskId }) =>
    lockingRead(knex, ofTenant(tenantId, taskId).first()),
  );
  const taskRow = async (tenantId: string, taskId: string) =>
    (await selectTaskOfTenant<TaskRow>({ tenantId, taskId }))[0] as TaskRow | undefined;
  const lockedTaskRow = (tenantId: string, taskId: string) => async (trx: Transaction) =>
    (await lockTaskOfTenant<TaskRow>({ tenantId, taskId }, trx))[0] as TaskRow | undefined;
  const taskOfTenant = (tenantId: string, taskId: string) => (trx: Transaction) =>
    trx('tasks')
      .where('task_id', taskId)
      .whereIn('project_id', trx('projects').select('project_id').where('tenant_id', tenantId));
  const projectOfTenant = (tenantId: string, projectId: string) =>
    knex('projects').first('project_id').where({ project_id: projectId, tenant_id: tenantId });

  const changes = recordedChanges<TaskRow, Task, TaskUpdate>(events, {
    resource: 'task',
    toResource: toTask,
    projectOf: (task) => task.project_id,
    scoped: taskOfTenant,
    locked: lockedTaskRow,
    // The columns whose values are not the fields' own: they replace what the update names.
    derived: (before, changes, updatedAt) => ({
      ...(changes.status !== undefined && {
        completed_at: completedAt(before, changes.status, updatedAt),
      }),
      ...(changes.priority !== undefined && { priority: priorityRank(changes.priority) }),
      ...(changes.labels !== undefined && {
        labels: JSON.stringify(labelSet(changes.labels, JSON.parse(before.labels) as string[])),
      }),
    }),
  });

  /** The folds by which a task's labels are found: written with the task, in its transaction. */
  const writeLabelFolds = async (write: WriteContext, taskId: string, labels: string[]) => {
    if (labels.length === 0) return;
    await write.trx.later(
      knex('task_labels')
        .insert(labels.map((label) => ({ task_id: taskId, label_fold: labelFold(label) })))
        .toSQL(),
    );
  };

  /**
   * The tokens of the task's words for the full-text indexes (task-filter/words.ts), with it; and
   * its tenant and created_at, by which a search by words alone picks its page there (wordsPage).
   */
  const insertSearchWords = async (write: WriteContext, row: TaskRow) => {
    const { task_id, tenant_id, created_at } = row;
    const search_words = searchWords(row.title, row.description);
    await write.trx.later(
      knex('task_search_words').insert({ task_id, search_words, tenant_id, created_at }).toSQL(),
    );
  };
  const updateSearchWords = async (write: WriteContext, task: Task) => {
    const search_words = searchWords(task.title, task.description);
    await write.trx.later(
      knex('task_search_words').where('task_id', task.task_id).update({ search_words }).toSQL(),
    );
  };

  return translatingErrors({
    /** Adds a pending task; UnknownProjectError when the tenant has no such project. */
    async create(
      tenantId: string,
      task: TaskCreate,
      write: WriteContext,
    ): Promise<Versioned<Task>> {
      const now = nowForDb();
      const row: TaskRow = {
        task_id: uuidv7(),
        project_id: task.project_id,
        // The project's tenant: the insert fails unless the project is this tenant's.
        tenant_id: tenantId,
        title: task.title,
        description: task.description ?? null,
        status: 'pending',
        created_at: now,
        updated_at: now,
        completed_at: null,
        priority: priorityRank(task.priority ?? 'none'),
        due_on: task.due_on ?? null,
        labels: JSON.stringify(labelSet(task.labels ?? [])),
        assignee: task.assignee ?? null,
        version: 1,
      };
      const bindings = insertedColumns.flatMap((column) =>
        column === 'project_id' ? [task.project_id, tenantId] : [row[column] as Knex.Value],
      );
      await write.trx.later({
        sql: insertIntoProjectOfTenant,
        bindings,
        failureMeans: (error) =>
          isNullViolation(error) || isForeignKeyViolation(error)
            ? new UnknownProjectError(task.project_id)
            : undefined,
      });
      const created = versioned(row);
      await writeLabelFolds(write, row.task_id, created.value.labels);
      await insertSearchWords(write, row);
      await events.record(write, {
        tenantId,
        type: 'task.created',
        projectId: row.project_id,
        object: created.value,
      });
      return created;
    },

    async find(tenantId: string, taskId: string): Promise<Versioned<Task> | undefined> {
      const row = await taskRow(tenantId, taskId);
      return row && versioned(row);
    },

    /** A page of the project's tasks; undefined when the tenant has no such project. */
    async listForProject(
      tenantId: string,
      projectId: string,
      query: TaskListQuery,
    ): Promise<TaskPage | undefined> {
      const order = taskOrder(query.sort);
      const { filter, parts } = listFilter(
        knex,
        query,
        order.leading === undefined ? order.column : undefined,
      );
      const { rows, nextCursor } = await selectPage<TaskRow>({
        db: knex,
        table: 'tasks',
        idColumn: 'task_id',
        columns: listedColumns,
        scope: (q, values) => q.where('tasks.project_id', values.projectId).where(filter),
        parts,
        // A condition on no column of the page: the database reads the project's row once.
        visibleTo: (q, values) =>
          q.whereExists(projectOfTenant(String(values.tenantId), String(values.projectId))),
        order,
        limit: query.limit,
        cursor: query.cursor,
        values: { tenantId, projectId },
        // Without filters the statement is the same for every project: compiled once.
        shape: isFiltered(query) ? undefined : 'tasks of a project',
      });
      // An empty page may mean the project is not the tenant's: only then is that asked apart.
      if (rows.length === 0 && (await projectOfTenant(tenantId, projectId)) === undefined)
        return undefined;
      return { data: rows.map(toTask), next_cursor: nextCursor };
    },

    /**
     * A page of the tenant's tasks, across its projects, that match the filter (checked by
     * checkTaskFilter); keyset paging as the project's list has.
     */
    async search(tenantId: string, query: TaskSearchQuery): Promise<TaskPage> {
      const { filter, sort, limit, cursor } = query;
      const text = await textLookup(knex, tenantId, filter);
      const order = taskOrder(sort);
      // Words alone, found through the full-text index, in created_at order: the page is picked
      // among the words' rows, which hold their task's tenant and created_at (20261215100200),
      // without reading each task with the words to sort them.
      const wordsPage =
        text === 'index' && wordsOnly(filter) && order.column === 'created_at' && !order.leading;
      const { rows, nextCursor } = await selectPage<TaskRow>({
        db: knex,
        table: 'tasks',
        idColumn: 'task_id',
        ...(wordsPage
          ? {
              seekTable: 'task_search_words',
              scope: (q) => whereWords(q.where('task_search_words.tenant_id', tenantId), filter),
            }
          : {
              // Through the indexes led by tenant_id (migration 20261215100100), one for each order.
              scope: (q) => whereTaskFilter(q.where('tasks.tenant_id', tenantId), filter, text),
            }),
        order,
        limit,
        cursor,
      });
      return { data: rows.map(toTask), next_cursor: nextCursor };
    },

    /**
     * As recordedChanges' update; `labels` replaces the set, and the folds with it; a new title
     * or description, the words.
     */
    async update(
      tenantId: string,
      taskId: string,
      update: TaskUpdate,
      condition: VersionCondition,
      write: WriteContext,
    ): Promise<Versioned<Task> | undefined> {
      const after = await changes.update(tenantId, taskId, update, condition, write);
      if (after !== undefined && update.labels !== undefined) {
        await write.trx.later(knex('task_labels').where('task_id', taskId).delete().toSQL());
        await writeLabelFolds(write, taskId, after.value.labels);
      }
      if (after !== undefined && (update.title !== undefined || update.description !== undefined))
        await updateSearchWords(write, after.value);
      return after;
    },

    remove: changes.remove,
  });
}

type Condition = (query: Knex.QueryBuilder) => void;

/**
 * A list's filters as conditions on tasks. Sorted by a timestamp alone (`sortedBy`), a list of
 * several statuses, or else of several priorities, is in parts, one per value: an index starts
 * with the project and that value, then the timestamp (status: created_at and updated_at;
 * priority: created_at), so each part is one seek of it. A value named twice is one part.
 */
/** The list's parameters that choose no tasks: any other given is a filter. */
const pagingParameters = new Set(['sort', 'limit', 'cursor']);

/** Whether a list asks for some of the project's tasks only. */
const isFiltered = (query: TaskListQuery) =>
  Object.entries(query).some(([name, value]) => value !== undefined && !pagingParameters.has(name));

function listFilter(db: Knex, query: TaskListQuery, sortedBy?: 'created_at' | 'updated_at') {
  const { status, priority, assignee, label, due_before, due_after } = query;
  const ranks = priority && [...new Set(priority.map(priorityRank))];
  const statuses = status && [...new Set(status)];
  const partsOf = <T>(column: string, values: T[]): Condition[] =>
    values.map((value) => (q) => q.where(column, value as Knex.Value));
  const byStatus = statuses && sortedBy ? partsOf('tasks.status', statuses) : undefined;
  const byPriority =
    !byStatus && ranks && sortedBy === 'created_at' ? partsOf('tasks.priority', ranks) : undefined;
  const filter: Condition = (q) => {
    if (statuses && !byStatus) q.whereIn('tasks.status', statuses);
    if (ranks && !byPriority) q.whereIn('tasks.priority', ranks);
    if (assignee !== undefined) q.where('tasks.assignee', assignee);
    // A task has every label when it has as many of their folds as there are.
    if (label !== undefined && label.length > 0)
      q.whereRaw('(?) = ?', [labelsOfTask(db, label), new Set(label.map(labelFold)).size]);
    // A task without a due date is neither before nor after a day: NULL compares to nothing.
    if (due_before !== undefined) q.where('tasks.due_on', '<', due_before);
    if (due_after !== undefined) q.where('tasks.due_on', '>', due_after);
  };
  return { filter, parts: byStatus ?? byPriority };
}
