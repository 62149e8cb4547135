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
import { keptBy } from '../../kept-by';
import { labelFold, priorities, priorityRank } from '../task-planning';
import type { TaskFilter } from './shape';
import { foldedWords, TaskTextWords, textWord } from './words';

type Task = components['schemas']['Task'];

/**
 * A label's fold, kept by label (labels repeat from task to task): a look-up costs a fraction of
 * a fold's test and lower case.
 */
const foldOf = keptBy(10_000, labelFold);

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

/** The functions a compiled predicate calls, by the names its source gives them. */
const helpers = {
  hasAny(folds: readonly string[], wanted: readonly string[]): boolean {
    for (const fold of wanted) if (folds.includes(fold)) return true;
    return false;
  },
  hasAll(folds: readonly string[], wanted: readonly string[]): boolean {
    for (const fold of wanted) if (!folds.includes(fold)) return false;
    return true;
  },
};

/**
 * The filter as a predicate: one function made for it, whose source is the filter's conditions
 * joined by `&&`, `||` and `!`, so V8 compiles them as one body. A tree of closures, one for each
 * condition, cost a third more (the planning bench's ten conditions: 4.2 k instructions a task
 * against 3.1 k): their calls, all through one call site, could not be inlined.
 * What the filter holds never enters the source: each value is a constant passed in and named by
 * its place (`c0`, `c1`…); the source is this module's templates and field names alone.
 *
 * The filter must have passed checkTaskFilter; the task is as the newest version answers it
 * (labels in any case, timestamps as ISO strings with milliseconds and Z). The parts of `all`
 * and `any` are asked in the filter's order.
 */
export function compileTaskFilter(filter: TaskFilter): TaskPredicate {
  const constants: unknown[] = [];
  const constant = (value: unknown) => `c${constants.push(value) - 1}`;
  const body = sourceOf(filter, constant);
  const names = constants.map((_, i) => `c${i}`).join(', ');
  const make = new Function(
    'constants',
    'helpers',
    `const [${names}] = constants; const { hasAny, hasAll } = helpers;
     return (r) => { const t = r.task; return ${body}; };`,
  ) as (constants: unknown[], given: typeof helpers) => TaskPredicate;
  return make(constants, helpers);
}

/** Conditions joined, `empty` for none. */
const joined = (parts: string[], operator: '&&' | '||', empty: string) =>
  parts.length === 0 ? empty : `(${parts.join(` ${operator} `)})`;

/** A filter's source: an expression over the task `t` and its reading `r`. */
function sourceOf(filter: TaskFilter, constant: (value: unknown) => string): string {
  if ('all' in filter)
    return joined(
      filter.all.map((part) => sourceOf(part, constant)),
      '&&',
      'true',
    );
  if ('any' in filter)
    return joined(
      filter.any.map((part) => sourceOf(part, constant)),
      '||',
      'false',
    );
  if ('not' in filter) return `!${sourceOf(filter.not, constant)}`;
  const parts: string[] = [];
  const among = (field: string, values: readonly unknown[] | undefined) => {
    if (values !== undefined) parts.push(`${constant(values)}.includes(t.${field})`);
  };
  if ('project_id' in filter) among('project_id', filter.project_id.in);
  else if ('status' in filter) among('status', filter.status.in);
  else if ('priority' in filter) {
    // Its operators as one list of the priorities they allow.
    const { in: listed, gte, lte } = filter.priority;
    const least = gte === undefined ? 0 : priorityRank(gte);
    const most = lte === undefined ? priorities.length - 1 : priorityRank(lte);
    if (listed !== undefined || gte !== undefined || lte !== undefined)
      among(
        'priority',
        priorities.filter(
          (priority, rank) =>
            rank >= least && rank <= most && (listed === undefined || listed.includes(priority)),
        ),
      );
  } else if ('assignee' in filter) {
    const { eq, in: listed, is_null: isNull } = filter.assignee;
    if (eq !== undefined) parts.push(`t.assignee === ${constant(eq)}`);
    if (listed !== undefined)
      parts.push(`(t.assignee !== null && ${constant(listed)}.includes(t.assignee))`);
    if (isNull !== undefined) parts.push(`t.assignee ${isNull ? '===' : '!=='} null`);
  } else if ('labels' in filter) {
    const { has, has_any: hasAny, has_all: hasAll, has_none: hasNone } = filter.labels;
    const folds = (labels: string[]) => constant(labels.map(labelFold));
    if (has !== undefined) parts.push(`r.labelFolds().includes(${constant(labelFold(has))})`);
    if (hasAny !== undefined) parts.push(`hasAny(r.labelFolds(), ${folds(hasAny)})`);
    if (hasAll !== undefined) parts.push(`hasAll(r.labelFolds(), ${folds(hasAll)})`);
    if (hasNone !== undefined) parts.push(`!hasAny(r.labelFolds(), ${folds(hasNone)})`);
  } else if ('due_on' in filter) {
    const { lt, lte, gt, gte, is_null: isNull } = filter.due_on;
    // A comparison never matches a task without a due date, even under `not`'s negation of it.
    const compared = (operator: string, bound: string | undefined) => {
      if (bound !== undefined)
        parts.push(`(t.due_on !== null && t.due_on ${operator} ${constant(bound)})`);
    };
    compared('<', lt);
    compared('<=', lte);
    compared('>', gt);
    compared('>=', gte);
    if (isNull !== undefined) parts.push(`t.due_on ${isNull ? '===' : '!=='} null`);
  } else if ('created_at' in filter || 'updated_at' in filter) {
    // Timestamps of one shape (milliseconds and Z) compare as strings.
    const field = 'created_at' in filter ? 'created_at' : 'updated_at';
    const { lt, gte } = 'created_at' in filter ? filter.created_at : filter.updated_at;
    if (lt !== undefined) parts.push(`t.${field} < ${constant(lt)}`);
    if (gte !== undefined) parts.push(`t.${field} >= ${constant(gte)}`);
  } else if ('text' in filter) {
    for (const fold of foldedWords(filter.text))
      parts.push(`r.textWords().has(${constant(textWord(fold))})`);
  } else throw new Error('not a checked TaskFilter');
  return joined(parts, '&&', 'true');
}

/** Predicates made by taskMatches, by filter: a filter asked of many tasks is compiled once. */
const compiled = new WeakMap<TaskFilter, TaskPredicate>();

/** Whether the task matches the filter (each filter compiled once, a task read once for all). */
export function taskMatches(filter: TaskFilter, task: Task): boolean {
  let predicate = compiled.get(filter);
  if (predicate === undefined) compiled.set(filter, (predicate = compileTaskFilter(filter)));
  return predicate(new TaskReading(task));
}
