/**
 * A TaskFilter evaluated on one task, in memory, as the newest version answers the task: what a
 * webhook subscription asks of a task before and after a change. It agrees with the SQL
 * evaluator (sql.ts) on every task and filter; test/db/task-filter-equality.test.ts holds them
 * to it.
 *
 * A filter is compiled once into a predicate (a subscription asks the same one of every event):
 * what the filter alone decides (its label folds, priority ranks, words) is worked out then, not
 * for each task, and what a task alone decides (its label folds, its words) once per task, when
 * a condition first asks, however many conditions and predicates ask (TaskReading).
 */
import type { components } from '../../../generated/api';
import { labelFold, priorityRank } from '../task-planning';
import type { TaskFilter } from './shape';
import { foldedWords, TaskTextWords, textWord } from './words';

type Task = components['schemas']['Task'];

/** Label folds by label (labels repeat from task to task); past this many it starts again. */
const folds = new Map<string, string>();
const mostFolds = 10_000;

/** A label's fold, looked up: a look-up costs a fraction of a fold's test and lower case. */
function foldOf(label: string): string {
  let fold = folds.get(label);
  if (fold === undefined) {
    if (folds.size >= mostFolds) folds.clear();
    folds.set(label, (fold = labelFold(label)));
  }
  return fold;
}

/**
 * A task as predicates read it, with its label folds and words worked out once, when first
 * asked for: the words are the cost of `text` (words.ts), and a task is read by every
 * endpoint's predicate.
 */
export class TaskReading {
  private folds?: string[];
  private words?: TaskTextWords;

  constructor(readonly task: Task) {}

  /**
   * An array, not a set: a task has at most 20 labels, and making a set for each event cost more
   * than its look-ups saved.
   */
  labelFolds(): readonly string[] {
    return (this.folds ??= this.task.labels.map(foldOf));
  }

  textWords(): TaskTextWords {
    return (this.words ??= new TaskTextWords(this.task.title, this.task.description));
  }
}

/** Whether the task matches: a compiled TaskFilter. */
export type TaskPredicate = (task: TaskReading) => boolean;

const always: TaskPredicate = () => true;

/** All of the parts hold; loops rather than `every`, as a predicate runs for each event. */
function allOf(parts: TaskPredicate[]): TaskPredicate {
  if (parts.length === 0) return always;
  if (parts.length === 1) return parts[0];
  return (task) => {
    for (const part of parts) if (!part(task)) return false;
    return true;
  };
}

function anyOf(parts: TaskPredicate[]): TaskPredicate {
  return (task) => {
    for (const part of parts) if (part(task)) return true;
    return false;
  };
}

/** Timestamps of one shape (milliseconds and Z) compare as strings. */
function inMoments(
  at: (task: Task) => string,
  { lt, gte }: { lt?: string; gte?: string },
): TaskPredicate {
  const parts: TaskPredicate[] = [];
  if (lt !== undefined) parts.push(({ task }) => at(task) < lt);
  if (gte !== undefined) parts.push(({ task }) => at(task) >= gte);
  return allOf(parts);
}

/**
 * The filter as a predicate. The filter must have passed checkTaskFilter; the task is as the
 * newest version answers it (labels in any case, timestamps as ISO strings with milliseconds
 * and Z). The parts of `all` and `any` are asked in the filter's order.
 */
export function compileTaskFilter(filter: TaskFilter): TaskPredicate {
  if ('all' in filter) return allOf(filter.all.map(compileTaskFilter));
  if ('any' in filter) return anyOf(filter.any.map(compileTaskFilter));
  if ('not' in filter) {
    const inner = compileTaskFilter(filter.not);
    return (task) => !inner(task);
  }
  const parts: TaskPredicate[] = [];
  if ('project_id' in filter) {
    const among = filter.project_id.in;
    if (among !== undefined) parts.push(({ task }) => among.includes(task.project_id));
  } else if ('status' in filter) {
    const among = filter.status.in;
    if (among !== undefined) parts.push(({ task }) => among.includes(task.status));
  } else if ('priority' in filter) {
    const { in: among, gte, lte } = filter.priority;
    if (among !== undefined) parts.push(({ task }) => among.includes(task.priority));
    if (gte !== undefined) {
      const least = priorityRank(gte);
      parts.push(({ task }) => priorityRank(task.priority) >= least);
    }
    if (lte !== undefined) {
      const most = priorityRank(lte);
      parts.push(({ task }) => priorityRank(task.priority) <= most);
    }
  } else if ('assignee' in filter) {
    const { eq, in: among, is_null: isNull } = filter.assignee;
    if (eq !== undefined) parts.push(({ task }) => task.assignee === eq);
    if (among !== undefined)
      parts.push(({ task }) => task.assignee !== null && among.includes(task.assignee));
    if (isNull !== undefined) parts.push(({ task }) => (task.assignee === null) === isNull);
  } else if ('labels' in filter) {
    const { has, has_any: hasAny, has_all: hasAll, has_none: hasNone } = filter.labels;
    const folds = (labels: string[]) => labels.map(labelFold);
    if (has !== undefined) {
      const fold = labelFold(has);
      parts.push((task) => task.labelFolds().includes(fold));
    }
    if (hasAny !== undefined) {
      const any = folds(hasAny);
      parts.push((task) => any.some((fold) => task.labelFolds().includes(fold)));
    }
    if (hasAll !== undefined) {
      const all = folds(hasAll);
      parts.push((task) => all.every((fold) => task.labelFolds().includes(fold)));
    }
    if (hasNone !== undefined) {
      const none = folds(hasNone);
      parts.push((task) => !none.some((fold) => task.labelFolds().includes(fold)));
    }
  } else if ('due_on' in filter) {
    const { lt, lte, gt, gte, is_null: isNull } = filter.due_on;
    // A comparison never matches a task without a due date, even under `not`'s negation of it.
    const compared = (bound: string | undefined, holds: (due: string) => boolean) => {
      if (bound !== undefined) parts.push(({ task }) => task.due_on !== null && holds(task.due_on));
    };
    compared(lt, (day) => day < lt!);
    compared(lte, (day) => day <= lte!);
    compared(gt, (day) => day > gt!);
    compared(gte, (day) => day >= gte!);
    if (isNull !== undefined) parts.push(({ task }) => (task.due_on === null) === isNull);
  } else if ('created_at' in filter) {
    parts.push(inMoments((task) => task.created_at, filter.created_at));
  } else if ('updated_at' in filter) {
    parts.push(inMoments((task) => task.updated_at, filter.updated_at));
  } else if ('text' in filter) {
    const words = [...foldedWords(filter.text)].map(textWord);
    parts.push((task) => {
      const text = task.textWords();
      return words.every((word) => text.has(word));
    });
  } else throw new Error('not a checked TaskFilter');
  return allOf(parts);
}

/**
 * Whether the task matches the filter, asked once: a filter asked of many tasks is compiled
 * once (compileTaskFilter) and each task read once (TaskReading).
 */
export function taskMatches(filter: TaskFilter, task: Task): boolean {
  return compileTaskFilter(filter)(new TaskReading(task));
}
