/**
 * The orders of task lists, as `sort` names them, in one place for every reader of tasks (a
 * project's list, a search): the key each sorts by, and its cursors. `due_on` and `priority`
 * break ties by `created_at`, then id; `-` reverses the whole key, but tasks without `due_on`
 * come last either way. Every order is served by an index of tasks that starts with project_id
 * (migrations 20261121150300, 20261121150400, 20261205120000, 20261205120100).
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/api';
import { cursorAfterRow, seekInOrder, type KeysetOrder, type LeadingKey } from './keyset';
import { priorities } from './task-planning';

export type TaskSort = NonNullable<components['parameters']['TaskSort']>;

const dayPattern = /^\d{4}-\d{2}-\d{2}$/;

/** A day that exists, `YYYY-MM-DD` (not 2026-02-30): it reads back the same. */
export function isRealDay(value: unknown): value is string {
  if (typeof value !== 'string' || !dayPattern.test(value)) return false;
  const day = new Date(`${value}T00:00:00.000Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === value;
}

/** The columns as the rows hold them: `due_on` a day, `priority` its rank (task-planning.ts). */
const leadingKeys: Record<string, LeadingKey> = {
  due_on: { column: 'due_on', nullable: true, isValue: isRealDay },
  priority: {
    column: 'priority',
    nullable: false,
    isValue: (rank) =>
      Number.isInteger(rank) && (rank as number) >= 0 && (rank as number) < priorities.length,
  },
};

export function taskOrder(sort: TaskSort): KeysetOrder {
  const descending = sort.startsWith('-');
  const name = descending ? sort.slice(1) : sort;
  const leading = leadingKeys[name];
  if (leading) return { column: 'created_at', descending, leading };
  return { column: name as KeysetOrder['column'], descending };
}

/**
 * Orders a query over `tasks` (joined to other tables or not) by `sort` and keeps the tasks after
 * the cursor's position; a cursor made for another sort, or that cannot be, is InvalidCursorError.
 * Limit it to one more than the page, and make the next page's cursor with nextTaskCursor.
 */
export function orderTasks(
  query: Knex.QueryBuilder,
  sort: TaskSort,
  cursor?: string,
): Knex.QueryBuilder {
  return seekInOrder(query, {
    table: 'tasks',
    idColumn: 'task_id',
    order: taskOrder(sort),
    cursor,
  });
}

/** The cursor of the page after the one whose last task is `row` (a row of tasks, as read). */
export function nextTaskCursor(sort: TaskSort, row: Record<string, unknown>): string {
  return cursorAfterRow(taskOrder(sort), 'task_id', row);
}
