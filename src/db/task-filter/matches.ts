/**
 * A TaskFilter evaluated on one task, in memory, as the newest version answers the task: what a
 * webhook subscription asks of a task before and after a change. It agrees with the SQL
 * evaluator (sql.ts) on every task and filter; test/db/task-filter-equality.test.ts holds them
 * to it.
 */
import type { components } from '../../../generated/api';
import { labelFold, priorityRank } from '../task-planning';
import type { TaskFilter } from './shape';
import { foldedWords, taskWords } from './words';

type Task = components['schemas']['Task'];

/**
 * Whether the task matches the filter. The filter must have passed checkTaskFilter; the task is
 * as the newest version answers it (labels in any case, timestamps as ISO strings with
 * milliseconds and Z).
 */
export function taskMatches(filter: TaskFilter, task: Task): boolean {
  if ('all' in filter) return filter.all.every((inner) => taskMatches(inner, task));
  if ('any' in filter) return filter.any.some((inner) => taskMatches(inner, task));
  if ('not' in filter) return !taskMatches(filter.not, task);
  if ('project_id' in filter) return filter.project_id.in?.includes(task.project_id) ?? true;
  if ('status' in filter) return filter.status.in?.includes(task.status) ?? true;
  if ('priority' in filter) {
    const { in: among, gte, lte } = filter.priority;
    const rank = priorityRank(task.priority);
    return (
      (among === undefined || among.includes(task.priority)) &&
      (gte === undefined || rank >= priorityRank(gte)) &&
      (lte === undefined || rank <= priorityRank(lte))
    );
  }
  if ('assignee' in filter) {
    const { eq, in: among, is_null: isNull } = filter.assignee;
    const assignee = task.assignee;
    return (
      (eq === undefined || assignee === eq) &&
      (among === undefined || (assignee !== null && among.includes(assignee))) &&
      (isNull === undefined || (assignee === null) === isNull)
    );
  }
  if ('labels' in filter) {
    const { has, has_any: hasAny, has_all: hasAll, has_none: hasNone } = filter.labels;
    const folds = new Set(task.labels.map(labelFold));
    const hasLabel = (label: string) => folds.has(labelFold(label));
    return (
      (has === undefined || hasLabel(has)) &&
      (hasAny === undefined || hasAny.some(hasLabel)) &&
      (hasAll === undefined || hasAll.every(hasLabel)) &&
      (hasNone === undefined || !hasNone.some(hasLabel))
    );
  }
  if ('due_on' in filter) {
    const { lt, lte, gt, gte, is_null: isNull } = filter.due_on;
    const due = task.due_on;
    // A comparison never matches a task without a due date, even under `not`'s negation of it.
    const compared = (bound: string | undefined, holds: (due: string) => boolean) =>
      bound === undefined || (due !== null && holds(due));
    return (
      compared(lt, (day) => day < lt!) &&
      compared(lte, (day) => day <= lte!) &&
      compared(gt, (day) => day > gt!) &&
      compared(gte, (day) => day >= gte!) &&
      (isNull === undefined || (due === null) === isNull)
    );
  }
  if ('created_at' in filter) return inMoments(task.created_at, filter.created_at);
  if ('updated_at' in filter) return inMoments(task.updated_at, filter.updated_at);
  if ('text' in filter) {
    const words = taskWords(task.title, task.description);
    return [...foldedWords(filter.text)].every((word) => words.has(word));
  }
  throw new Error('not a checked TaskFilter');
}

/** Timestamps of one shape (milliseconds and Z) compare as strings. */
function inMoments(at: string, { lt, gte }: { lt?: string; gte?: string }): boolean {
  return (lt === undefined || at < lt) && (gte === undefined || at >= gte);
}
