/**
 * A stored task event's task, read for the fields a tenant's filters ask of it and no others.
 * `JSON.parse` of the whole task was most of a filter's cost (issue 46: a filter may add under
 * 5 % to a delivery); one regular expression over the stored task, its fields not asked for
 * skipped, costs about half as much. It accepts only the shape this service writes
 * (`JSON.stringify` of the task, its keys in toTask's order, no spaces): strings without escapes
 * are taken as they stand, a string with escapes is parsed alone, and labels are split where no
 * label can hold `","`; data in any other shape does not match, and the caller parses it whole.
 */
import type { components } from '../../generated/api';

type Task = components['schemas']['Task'];
type Field = keyof Task;

/** Reads a stored task event's `data`; undefined when it is not in the shape this service writes. */
export type TaskReader = (data: string) => Task | undefined;

/** A string without escapes (its text in the first group), one with escapes (whole), or null. */
const scalar = '(?:"([^"\\\\]*)"|("[^"\\\\]*(?:\\\\.[^"\\\\]*)*")|null)';
/** Labels without escapes (what is between the outer quotes in the group). */
const labels = '\\[(?:"((?:[^"\\\\]|",")*)"|)\\]';
/** A field not asked for: any of the values a task's fields hold, escapes and all. */
const skipped =
  '(?:"[^"\\\\]*(?:\\\\.[^"\\\\]*)*"|null|\\[(?:"[^"\\\\]*(?:\\\\.[^"\\\\]*)*"(?:,|(?=\\])))*\\])';

type Match = RegExpExecArray;
type Value = (match: Match) => unknown;

const notAsked: Value = () => undefined;

function scalarAt(group: number): Value {
  return (match) => {
    const plain = match[group];
    if (plain !== undefined) return plain;
    const escaped = match[group + 1];
    return escaped === undefined ? null : JSON.parse(escaped);
  };
}

/** Split only when there are two or more: a split costs a fifth of the whole read (its runtime call and cache). */
function labelsAt(group: number): Value {
  return (match) => {
    const inner = match[group];
    if (inner === undefined) return [];
    return inner.includes('","') ? inner.split('","') : [inner];
  };
}

/**
 * The task of a match, every field in toTask's order (so `taskFields` below is that order);
 * a field not asked for is undefined. A literal rather than a loop over the fields: every task
 * then has one shape, and a loop's keyed stores cost more than the parse this replaces.
 */
const taskOf = (match: Match, value: Record<Field, Value>): Task => ({
  task_id: value.task_id(match) as Task['task_id'],
  project_id: value.project_id(match) as Task['project_id'],
  title: value.title(match) as Task['title'],
  description: value.description(match) as Task['description'],
  status: value.status(match) as Task['status'],
  created_at: value.created_at(match) as Task['created_at'],
  updated_at: value.updated_at(match) as Task['updated_at'],
  completed_at: value.completed_at(match) as Task['completed_at'],
  priority: value.priority(match) as Task['priority'],
  due_on: value.due_on(match) as Task['due_on'],
  labels: value.labels(match) as Task['labels'],
  assignee: value.assignee(match) as Task['assignee'],
});

/** A Task's fields in the order stored tasks hold them. */
export const taskFields = Object.keys(
  taskOf([] as unknown as Match, new Proxy({} as Record<Field, Value>, { get: () => notAsked })),
) as Field[];

/**
 * The reader of the fields asked (any others are undefined in what it reads), or undefined when
 * none is a Task's field.
 */
export function taskReaderOf(asked: ReadonlySet<string>): TaskReader | undefined {
  if (!taskFields.some((field) => asked.has(field))) return undefined;
  const value = {} as Record<Field, Value>;
  let groups = 0;
  const parts = taskFields.map((field) => {
    if (!asked.has(field)) {
      value[field] = notAsked;
      return `"${field}":${skipped}`;
    }
    const group = groups + 1;
    value[field] = field === 'labels' ? labelsAt(group) : scalarAt(group);
    groups += field === 'labels' ? 1 : 2;
    return `"${field}":${field === 'labels' ? labels : scalar}`;
  });
  // The whole task from the data's start, to its end: its `previous` or the data's end.
  const pattern = new RegExp(`^\\{"object":\\{${parts.join(',')}\\}(?:,"previous":|\\}$)`);
  return (data) => {
    const match = pattern.exec(data);
    return match === null ? undefined : taskOf(match, value);
  };
}
