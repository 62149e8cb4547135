/**
 * Which task events an endpoint subscribes to (version 2026-12-15's `filter` and `fields`),
 * decided as its deliveries are planned, so that an event it does not want gets no delivery at
 * all. Both are read on the event as stored, in the newest shape, whatever version the endpoint's
 * deliveries are given in: `fields` against the keys of `data.previous`, `filter` against the task
 * after the change (`data.object`) and before it (`data.object` with `data.previous` over it;
 * a created task has no before, a deleted one no after). Project events ignore both.
 *
 * Cheap, as it runs for each event and endpoint (issue 46: under 5 % of a delivery's work): a
 * subscription is made once from the stored JSON, its filter compiled then into a predicate;
 * an event's task is read once for all of a tenant's endpoints, for just the fields their
 * filters read (stored-task.ts), and once for all of their predicates (its words, the cost of
 * `text`, worked out at most once an event), and the task before the change looked at only
 * when the change touched a field the filter reads. `text` is asked last, as the parts that
 * need no words often settle it first.
 */
import type { components } from '../../generated/api';
import {
  compileTaskFilter,
  TaskReading,
  type TaskFilter,
  type TaskPredicate,
} from '../db/task-filter';
import { keptBy } from '../kept-by';
import { taskReaderOf, type TaskReader } from './stored-task';

type Task = components['schemas']['Task'];
type EventType = components['schemas']['EventType'];

/** An endpoint's subscription, made once from its stored columns and kept for later chunks. */
export interface Subscription {
  /** The Task fields its filter reads (none without a filter). */
  readonly reads: ReadonlySet<string>;
  wants(event: TaskEvent): boolean;
}

/**
 * How a task event's data is stored (event-log.ts): `JSON.stringify({ object, previous })`, so
 * `,"previous":` is its last top-level key (a quote after a comma is never inside a string, where
 * a quote is escaped, and no Task field is named `previous`).
 */
const objectKey = '{"object":';
const previousKey = ',"previous":';

/**
 * A task event as a subscription reads it; each part worked out once, when first asked for. A
 * class, not closures: one is made for every event, and a closure made afresh is slower to call.
 * The task is read for the fields the tenant's filters ask of it (stored-task.ts), what changed
 * cut from the data and parsed alone: a whole parse was most of a filter's cost, and the task
 * after the change alone often settles it. Data not stored as this service writes it is parsed
 * whole.
 */
export class TaskEvent {
  private readTask?: Task;
  /** null: the event has no `previous`. */
  private readPrevious?: Partial<Task> | null;
  private whole?: { object: Task; previous?: Partial<Task> };
  private object?: TaskReading;
  private previousTask?: TaskReading;

  constructor(
    private readonly type: EventType,
    private readonly data: string,
    private readonly readTaskOf: TaskReader | undefined,
  ) {}

  private taskAfter(): Task {
    return (this.readTask ??= this.readTaskOf?.(this.data) ?? this.parseWhole().object);
  }

  private changed(): Partial<Task> | null {
    return (this.readPrevious ??= this.previousAlone() ?? this.parseWhole().previous ?? null);
  }

  /** What changed, cut from data stored as this service writes it (null: nothing stored). */
  private previousAlone(): Partial<Task> | null | undefined {
    const { data } = this;
    if (!data.startsWith(objectKey)) return undefined;
    const at = data.lastIndexOf(previousKey);
    if (at === -1) return null;
    try {
      return JSON.parse(data.slice(at + previousKey.length, -1)) as Partial<Task>;
    } catch {
      return undefined;
    }
  }

  private parseWhole(): { object: Task; previous?: Partial<Task> } {
    return (this.whole ??= JSON.parse(this.data) as { object: Task; previous?: Partial<Task> });
  }

  /**
   * Whether a `task.updated` changed any of the fields (keys of its `data.previous`);
   * undefined for other types. Looked up in the parsed object, with no set of its keys made.
   */
  touched(fields: readonly string[]): boolean | undefined {
    if (this.type !== 'task.updated') return undefined;
    const previous = this.changed() ?? {};
    for (const field of fields) if (Object.hasOwn(previous, field)) return true;
    return false;
  }

  /** The task before the change: none for a created task, the task itself for a deleted one. */
  before(): TaskReading | undefined {
    if (this.type === 'task.created') return undefined;
    if (this.type === 'task.deleted') return this.task();
    return (this.previousTask ??= new TaskReading({ ...this.taskAfter(), ...this.changed() }));
  }

  /** The task after the change: none for a deleted task. */
  after(): TaskReading | undefined {
    return this.type === 'task.deleted' ? undefined : this.task();
  }

  private task(): TaskReading {
    return (this.object ??= new TaskReading(this.taskAfter()));
  }
}

/** Readers made, by the fields they read: at most one for each set of a Task's fields. */
const readers = new Map<string, TaskReader | undefined>();

/**
 * The task events of an event row (its type and stored `data`) for a tenant's subscriptions:
 * each task read for the fields any of their filters asks; undefined for a project's.
 */
export function taskEventsFor(
  subscriptions: ReadonlyArray<Subscription | undefined>,
): (type: EventType, data: string) => TaskEvent | undefined {
  const asked = new Set<string>();
  for (const subscription of subscriptions)
    for (const field of subscription?.reads ?? []) asked.add(field);
  const key = [...asked].sort().join();
  if (!readers.has(key)) readers.set(key, taskReaderOf(asked));
  const reader = readers.get(key);
  return (type, data) => (type.startsWith('task.') ? new TaskEvent(type, data, reader) : undefined);
}

/**
 * Subscriptions made, by their stored columns joined with a NUL (which no JSON text holds):
 * endpoints with the same columns share one. Enough for every endpoint of many tenants.
 */
const made = keptBy(10_000, (columns: string) => {
  const [filter, fields] = columns.split('\0').map((json) => JSON.parse(json) as unknown);
  return subscribe(
    filter === null ? undefined : textLast(filter as TaskFilter),
    fields === null ? undefined : (fields as string[]),
  );
});

/**
 * The subscription of an endpoint's stored `task_filter` and `task_fields` (JSON, or null), or
 * undefined when it has neither (it wants every event its types select).
 */
export function subscriptionOf(
  filterJson: string | null,
  fieldsJson: string | null,
): Subscription | undefined {
  if (filterJson === null && fieldsJson === null) return undefined;
  // A column that is null is joined as `null`, which parses back to null.
  return made(`${filterJson}\0${fieldsJson}`);
}

function subscribe(filter: TaskFilter | undefined, fields: string[] | undefined): Subscription {
  const reads = filter === undefined ? new Set<string>() : fieldsRead(filter);
  const readList = [...reads];
  const matches: TaskPredicate | undefined = filter && compileTaskFilter(filter);
  return {
    reads,
    wants(event) {
      if (fields !== undefined && event.touched(fields) === false) return false;
      if (matches === undefined) return true;
      const after = event.after();
      if (after !== undefined && matches(after)) return true;
      // An update that changed nothing the filter reads leaves its answer as it was.
      if (event.touched(readList) === false) return false;
      const before = event.before();
      return before !== undefined && matches(before);
    },
  };
}

/** The Task fields a filter reads (`text` reads the title and the description). */
function fieldsRead(filter: TaskFilter, into = new Set<string>()): Set<string> {
  for (const [key, value] of Object.entries(filter)) {
    if (key === 'all' || key === 'any')
      for (const inner of value as TaskFilter[]) fieldsRead(inner, into);
    else if (key === 'not') fieldsRead(value as TaskFilter, into);
    else if (key === 'text') into.add('title').add('description');
    else into.add(key);
  }
  return into;
}

/**
 * The filter with the parts of each `all` and `any` that read `text` put last: the answer is the
 * same, and the cheap parts, which need no words of the task's title and description (the cost
 * of a filter), often settle it first.
 */
function textLast(filter: TaskFilter): TaskFilter {
  const readsText = (part: TaskFilter) => fieldsRead(part).has('title');
  const ordered = (parts: TaskFilter[]) => {
    const inOrder = parts.map(textLast);
    return [...inOrder.filter((part) => !readsText(part)), ...inOrder.filter(readsText)];
  };
  if ('all' in filter) return { all: ordered(filter.all) };
  if ('any' in filter) return { any: ordered(filter.any) };
  if ('not' in filter) return { not: textLast(filter.not) };
  return filter;
}
