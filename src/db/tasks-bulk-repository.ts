/**
 * Bulk changes of tasks (version 2026-12-15): up to 1,000 of a tenant's tasks changed or deleted
 * in the request's one transaction, with an event for each task the change alters. The rows are
 * read (and locked) in one statement; the writes, a few hundred rows to a statement, and the
 * events are held (trx.later) and go to the database with the COMMIT. Each write is conditional
 * on the version read, as a single change's is (versioned.ts): where a lock on one node does not
 * hold another off (Galera), a row that moved on fails the transaction, which runs again
 * (WriteConflictError), as a certification conflict at COMMIT does.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/api';
import { bulkTaskLimit, NotFoundError, TooManyLabelsError, TooManyTasksError } from '../errors';
import { WriteConflictError, translatingErrors } from './database-errors';
import type { HeldStatement } from './driver/pipelined-connection';
import { changedFields, type EventLog, type NewEvent } from './event-log';
import { affectedRows } from './raw-answers';
import { completedAt } from './task-completion';
import { whereTaskFilter, type TaskFilter } from './task-filter';
import { labelFold, labelSet, priorityRank } from './task-planning';
import { toTask, type TaskRow } from './tasks-repository';
import { nowForDb } from './timestamps';
import type { QuerySource, Transaction, WriteContext } from './transactions';
import { lockingRead } from './versioned';

type TaskBulkChanges = components['schemas']['TaskBulkChanges'];

/** The tasks a bulk change is about: those it names, or the tenant's that match a checked filter. */
export type TaskSelection = { taskIds: readonly string[] } | { filter: TaskFilter };

/** What a bulk change matched, and the ids of the tasks it changed (would change, for a dry run), by id. */
export interface BulkOutcome {
  matched: number;
  changed: string[];
}

/** The document's most labels of one task (the Labels schema's maxItems). */
const maxLabels = 20;
/** Rows to one UPDATE or DELETE: a statement of a few thousand bound values. */
const rowsPerWrite = 250;
/** Label folds to one INSERT: within SQLite's 500 terms of a compound SELECT. */
const foldsPerInsert = 250;

/** The columns a bulk change may write besides updated_at and version, each named here only. */
type ChangedColumn = 'status' | 'completed_at' | 'priority' | 'due_on' | 'assignee' | 'labels';

interface PlannedChange {
  before: TaskRow;
  after: TaskRow;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size)
    out.push(items.slice(start, start + size));
  return out;
}

const placeholders = (count: number) => Array.from({ length: count }, () => '?').join(', ');

/** `case task_id when ? then ? … end`: each row's own value, with its bindings. */
function perTask(rows: readonly TaskRow[], value: (row: TaskRow) => Knex.Value) {
  return {
    sql: `case task_id ${rows.map(() => 'when ? then ?').join(' ')} end`,
    bindings: rows.flatMap((row) => [row.task_id, value(row)]),
  };
}

/** The rows' ids, and the condition that each still has the version read. */
function stillAsRead(rows: readonly TaskRow[]) {
  const version = perTask(rows, (row) => row.version);
  return {
    sql: `task_id in (${placeholders(rows.length)}) and version = ${version.sql}`,
    bindings: [...rows.map((row) => row.task_id), ...version.bindings],
  };
}

/** A held write that must touch every one of `expected` rows, else the transaction runs again. */
function touchingAll(sql: string, bindings: Knex.Value[], expected: number): HeldStatement {
  return {
    sql,
    bindings,
    answerMeans: (result) =>
      affectedRows(result) === expected ? undefined : new WriteConflictError(),
  };
}

/** The columns the changes write: a status change sets completed_at too. */
function columnsOf(changes: TaskBulkChanges): ChangedColumn[] {
  const columns: ChangedColumn[] = [];
  if (changes.status !== undefined) columns.push('status', 'completed_at');
  if (changes.priority !== undefined) columns.push('priority');
  if (changes.due_on !== undefined) columns.push('due_on');
  if (changes.assignee !== undefined) columns.push('assignee');
  if (changes.labels_add !== undefined || changes.labels_remove !== undefined)
    columns.push('labels');
  return columns;
}

export function tasksBulkRepository(knex: Knex, events: EventLog) {
  const tenantProjects = (tenantId: string) =>
    knex('projects').select('project_id').where('tenant_id', tenantId);

  const ofTenant = (query: Knex.QueryBuilder, tenantId: string) =>
    query.whereIn('tasks.project_id', tenantProjects(tenantId));

  /** How many of the tenant's tasks match the filter. */
  async function countMatching(source: QuerySource, tenantId: string, filter: TaskFilter) {
    const query = whereTaskFilter(ofTenant(source('tasks'), tenantId), filter);
    const [{ count }] = await query.count({ count: '*' });
    return Number(count);
  }

  /**
   * The ids of the tenant's tasks that match the filter, by id; TooManyTasksError past the
   * limit. A plain read, which locks nothing: a locking read would lock every row it looked at
   * on the way, and the gaps between them (REPEATABLE READ), holding up others' inserts.
   */
  async function matchingIds(trx: Transaction, tenantId: string, filter: TaskFilter) {
    const rows: Array<{ task_id: string }> = await whereTaskFilter(
      ofTenant(trx('tasks'), tenantId),
      filter,
    )
      .select('tasks.task_id')
      .orderBy('tasks.task_id')
      .limit(bulkTaskLimit + 1);
    if (rows.length > bulkTaskLimit)
      throw new TooManyTasksError(await countMatching(trx, tenantId, filter));
    return rows.map((row) => row.task_id);
  }

  /**
   * The selected tasks of the tenant, by id, locked unless only looked at (a dry run): named
   * ones, a NotFoundError naming the first that is not the tenant's; or those matching a filter,
   * read again by id with the filter and locked, so that a task changed meanwhile to no longer
   * match is left out.
   */
  async function selected(
    trx: Transaction,
    tenantId: string,
    selection: TaskSelection,
    lock: boolean,
  ): Promise<TaskRow[]> {
    const named = 'taskIds' in selection;
    const ids = named
      ? [...new Set(selection.taskIds)]
      : await matchingIds(trx, tenantId, selection.filter);
    if (ids.length > bulkTaskLimit) throw new TooManyTasksError(ids.length);
    if (ids.length === 0) return [];
    let query = ofTenant(trx('tasks'), tenantId).whereIn('tasks.task_id', ids);
    if (!named) query = whereTaskFilter(query, selection.filter);
    query = query.select('tasks.*').orderBy('tasks.task_id');
    const rows = (await (lock ? lockingRead(knex, query) : query)) as TaskRow[];
    if (named && rows.length < ids.length) {
      const found = new Set(rows.map((row) => row.task_id));
      throw new NotFoundError(
        'task',
        ids.find((id) => !found.has(id))!,
      );
    }
    return rows;
  }

  /** The row as the changes leave it, at `updatedAt` (not before the row's own creation). */
  function changedRow(row: TaskRow, changes: TaskBulkChanges, now: string): TaskRow {
    const updatedAt = row.created_at > now ? row.created_at : now;
    const after: TaskRow = { ...row, updated_at: updatedAt, version: row.version + 1 };
    if (changes.status !== undefined) {
      after.status = changes.status;
      after.completed_at = completedAt(row, changes.status, updatedAt);
    }
    if (changes.priority !== undefined) after.priority = priorityRank(changes.priority);
    if (changes.due_on !== undefined) after.due_on = changes.due_on;
    if (changes.assignee !== undefined) after.assignee = changes.assignee;
    if (changes.labels_add !== undefined || changes.labels_remove !== undefined) {
      const had = JSON.parse(row.labels) as string[];
      const removed = new Set((changes.labels_remove ?? []).map(labelFold));
      const labels = labelSet(
        [...had.filter((label) => !removed.has(labelFold(label))), ...(changes.labels_add ?? [])],
        had,
      );
      if (labels.length > maxLabels)
        throw new TooManyLabelsError(row.task_id, labels.length, maxLabels);
      after.labels = JSON.stringify(labels);
    }
    return after;
  }

  /** The rows' updates, a chunk to a statement; a column the chunk's rows share is bound once. */
  async function writeUpdates(
    trx: Transaction,
    planned: PlannedChange[],
    columns: ChangedColumn[],
  ) {
    for (const chunk of chunks(planned, rowsPerWrite)) {
      const afters = chunk.map(({ after }) => after);
      const sets: string[] = [];
      const bindings: Knex.Value[] = [];
      for (const column of [...columns, 'updated_at' as const]) {
        const values = afters.map((row) => row[column] as Knex.Value);
        if (values.every((value) => value === values[0])) {
          sets.push(`${column} = ?`);
          bindings.push(values[0]);
        } else {
          const each = perTask(afters, (row) => row[column] as Knex.Value);
          sets.push(`${column} = ${each.sql}`);
          bindings.push(...each.bindings);
        }
      }
      const where = stillAsRead(chunk.map(({ before }) => before));
      await trx.later(
        touchingAll(
          `update tasks set ${sets.join(', ')}, version = version + 1 where ${where.sql}`,
          [...bindings, ...where.bindings],
          chunk.length,
        ),
      );
    }
  }

  /** The folds of the labels the changes took off and put on, beside the rows (task_labels). */
  async function writeLabelFolds(
    trx: Transaction,
    planned: PlannedChange[],
    changes: TaskBulkChanges,
  ) {
    const relabelled = planned.filter(({ before, after }) => before.labels !== after.labels);
    const removed = [...new Set((changes.labels_remove ?? []).map(labelFold))];
    if (removed.length > 0)
      for (const chunk of chunks(relabelled, rowsPerWrite))
        await trx.later(
          knex('task_labels')
            .whereIn(
              'task_id',
              chunk.map(({ before }) => before.task_id),
            )
            .whereIn('label_fold', removed)
            .delete()
            .toSQL(),
        );
    const added = relabelled.flatMap(({ before, after }) => {
      const had = new Set((JSON.parse(before.labels) as string[]).map(labelFold));
      return (JSON.parse(after.labels) as string[])
        .map(labelFold)
        .filter((fold) => !had.has(fold))
        .map((fold) => ({ task_id: before.task_id, label_fold: fold }));
    });
    for (const chunk of chunks(added, foldsPerInsert))
      await trx.later(knex('task_labels').insert(chunk).toSQL());
  }

  return translatingErrors({
    /** How many tasks the selection names or matches now: what a bulk change is counted by. */
    async size(tenantId: string, selection: TaskSelection): Promise<number> {
      if ('taskIds' in selection) return new Set(selection.taskIds).size;
      return countMatching(knex, tenantId, selection.filter);
    },

    /**
     * Applies the same changes to every selected task, all or nothing: a task already as asked
     * is matched but not written, and has no event. A dry run writes nothing.
     */
    async update(
      tenantId: string,
      selection: TaskSelection,
      changes: TaskBulkChanges,
      dryRun: boolean,
      write: WriteContext,
    ): Promise<BulkOutcome> {
      const rows = await selected(write.trx, tenantId, selection, !dryRun);
      const now = nowForDb();
      const planned: PlannedChange[] = [];
      const recorded: NewEvent[] = [];
      for (const before of rows) {
        const after = changedRow(before, changes, now);
        const [was, is] = [toTask(before), toTask(after)];
        const { updated_at: _updatedAt, ...altered } = changedFields(was, is);
        if (Object.keys(altered).length === 0) continue;
        planned.push({ before, after });
        recorded.push({
          tenantId,
          type: 'task.updated',
          projectId: before.project_id,
          object: is,
          previous: changedFields(was, is),
        });
      }
      if (!dryRun && planned.length > 0) {
        await writeUpdates(write.trx, planned, columnsOf(changes));
        await writeLabelFolds(write.trx, planned, changes);
        await events.recordMany(write, recorded);
      }
      return { matched: rows.length, changed: planned.map(({ before }) => before.task_id) };
    },

    /** Deletes every selected task, all or nothing, each with its event. A dry run deletes nothing. */
    async remove(
      tenantId: string,
      selection: TaskSelection,
      dryRun: boolean,
      write: WriteContext,
    ): Promise<BulkOutcome> {
      const rows = await selected(write.trx, tenantId, selection, !dryRun);
      if (!dryRun && rows.length > 0) {
        // Their label folds go with them (ON DELETE CASCADE).
        for (const chunk of chunks(rows, rowsPerWrite)) {
          const where = stillAsRead(chunk);
          await write.trx.later(
            touchingAll(`delete from tasks where ${where.sql}`, where.bindings, chunk.length),
          );
        }
        await events.recordMany(
          write,
          rows.map((row) => ({
            tenantId,
            type: 'task.deleted',
            projectId: row.project_id,
            object: toTask(row),
          })),
        );
      }
      return { matched: rows.length, changed: rows.map((row) => row.task_id) };
    },
  });
}
