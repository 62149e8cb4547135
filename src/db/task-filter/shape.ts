/**
 * The check of a TaskFilter's shape, wherever a request carries one (a search's and a bulk
 * change's `filter`, a webhook endpoint's): every fault is an issue with a JSON pointer to its
 * place (`/filter/all/2/labels/has`), so a client learns where, not merely that, it went wrong.
 * The document's schema says most of it; the limits it cannot say (depth, the count of
 * conditions, a word's length, a day that exists) are said here too, and a filter that passes
 * is safe for every evaluator.
 */
import type { components } from '../../../generated/api';
import { ProblemError } from '../../errors';
import { priorities } from '../task-planning';
import { isRealTimestamp, toDbTimestamp } from '../timestamps';
import { minWordLength, wordsOf } from './words';

export type TaskFilter = components['schemas']['TaskFilter'];
type ValidationIssue = components['schemas']['ValidationIssue'];

/** Combinators nest at most this deep (`{"all": [{"not": {"any": [...]}}]}` is 3). */
export const maxDepth = 3;
/** A filter has at most this many conditions: each operator of a field, and each `text`. */
export const maxConditions = 50;
/** At most this many issues are listed, as the request validator lists at most 20. */
const maxIssues = 20;

const combinators = ['all', 'any', 'not'] as const;

/** An operand's check: undefined when it is right, else what is wrong with it. */
type Operand = (value: unknown) => string | undefined;

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const datePattern = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
const timestampPattern =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;
// As the document's Label: no control characters, no space at either end.
const labelPattern =
  /^[^\s\u0000-\u001F\u007F-\u009F]([^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F])?$/;
const statuses = ['pending', 'in_progress', 'done', 'cancelled'];

const codePoints = (value: string) => [...value].length;

const oneOf =
  (values: readonly string[]): Operand =>
  (value) =>
    typeof value === 'string' && values.includes(value)
      ? undefined
      : `must be one of: ${values.join(', ')}`;

const uuid: Operand = (value) =>
  typeof value === 'string' && uuidPattern.test(value) ? undefined : 'must be a lowercase UUID';

const assignee: Operand = (value) =>
  typeof value === 'string' && codePoints(value) >= 1 && codePoints(value) <= 200
    ? undefined
    : 'must be a string of 1 to 200 characters';

const label: Operand = (value) =>
  typeof value === 'string' &&
  codePoints(value) <= 50 &&
  labelPattern.test(value) &&
  value.isWellFormed()
    ? undefined
    : 'must be a label: 1 to 50 characters, without control characters and without a space at either end';

const day: Operand = (value) => {
  if (typeof value !== 'string' || !datePattern.test(value)) return 'must be a date, YYYY-MM-DD';
  return isRealTimestamp(`${value} 00:00:00.000`) ? undefined : `is not a day that exists`;
};

const moment: Operand = (value) => {
  if (typeof value !== 'string' || !timestampPattern.test(value))
    return 'must be a timestamp such as 2026-11-21T09:30:00.123Z (UTC, with milliseconds)';
  return isRealTimestamp(toDbTimestamp(value)) ? undefined : 'is not a moment that exists';
};

const boolean: Operand = (value) => (typeof value === 'boolean' ? undefined : 'must be a boolean');

/** A list of 1 to `most` items, each checked by `item`; the first bad item is the fault. */
const listOf =
  (item: Operand, most: number): Operand =>
  (value) => {
    if (!Array.isArray(value) || value.length < 1 || value.length > most)
      return `must be a list of 1 to ${most} items`;
    for (const [index, one] of value.entries()) {
      const fault = item(one);
      if (fault !== undefined) return `item ${index} ${fault}`;
    }
    return undefined;
  };

/** Each field of a filter, with its operators and their operands, as TaskFilter's parts say. */
const fields: Record<string, Record<string, Operand>> = {
  project_id: { in: listOf(uuid, 100) },
  status: { in: listOf(oneOf(statuses), 4) },
  priority: {
    in: listOf(oneOf(priorities), 5),
    gte: oneOf(priorities),
    lte: oneOf(priorities),
  },
  assignee: { eq: assignee, in: listOf(assignee, 100), is_null: boolean },
  labels: {
    has: label,
    has_any: listOf(label, 50),
    has_all: listOf(label, 50),
    has_none: listOf(label, 50),
  },
  due_on: { lt: day, lte: day, gt: day, gte: day, is_null: boolean },
  created_at: { lt: moment, gte: moment },
  updated_at: { lt: moment, gte: moment },
};

const knownKeys = [...combinators, ...Object.keys(fields), 'text'];

/** A key as a JSON pointer's segment (RFC 6901). */
const segment = (key: string | number) => String(key).replace(/~/g, '~0').replace(/\//g, '~1');

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

function textFault(value: unknown): string | undefined {
  if (typeof value !== 'string' || codePoints(value) > 500 || !value.isWellFormed())
    return 'must be a string of up to 500 characters';
  const words = wordsOf(value);
  if (words.length === 0) return 'has no word (a run of letters and digits)';
  const short = words.filter((word) => codePoints(word) < minWordLength);
  if (short.length > 0)
    return `has words shorter than ${minWordLength} characters (${[...new Set(short)].join(', ')}): every word must have at least ${minWordLength}`;
  return undefined;
}

/**
 * The faults of a filter's shape, each with the pointer to its place under `pointer` (where the
 * request carries the filter: `/filter`); none when the filter is sound. The first 20 are listed,
 * and `notListed` counts the others.
 */
export function taskFilterIssues(
  value: unknown,
  pointer: string,
): { issues: ValidationIssue[]; notListed: number } {
  const issues: ValidationIssue[] = [];
  let notListed = 0;
  let conditions = 0;
  const fault = (at: string, message: string) => {
    if (issues.length < maxIssues) issues.push({ in: 'body', pointer: at, message });
    else notListed += 1;
  };

  const visit = (filter: unknown, at: string, depth: number): void => {
    if (!isObject(filter)) {
      fault(
        at,
        'must be an object: a combinator (all, any, not), one field with its operators, or text',
      );
      return;
    }
    const keys = Object.keys(filter);
    if (keys.length !== 1) {
      fault(
        at,
        keys.length === 0
          ? `names nothing: it must have one of ${knownKeys.join(', ')}`
          : `has ${keys.length} fields (${keys.join(', ')}); an object of a filter has exactly one: combine them with all`,
      );
      return;
    }
    const [key] = keys;
    const value = filter[key];
    const here = `${at}/${segment(key)}`;
    if ((combinators as readonly string[]).includes(key)) {
      if (depth + 1 > maxDepth) {
        fault(at, `nests combinators ${depth + 1} deep; at most ${maxDepth}`);
        return;
      }
      if (key === 'not') return visit(value, here, depth + 1);
      if (!Array.isArray(value) || value.length < 1 || value.length > maxConditions) {
        fault(here, `must be a list of 1 to ${maxConditions} filters`);
        return;
      }
      value.forEach((inner, index) => visit(inner, `${here}/${index}`, depth + 1));
      return;
    }
    if (key === 'text') {
      conditions += 1;
      const wrong = textFault(value);
      if (wrong !== undefined) fault(here, wrong);
      return;
    }
    const operators = fields[key];
    if (operators === undefined) {
      fault(here, `is not a field or combinator of a filter (one of: ${knownKeys.join(', ')})`);
      return;
    }
    if (!isObject(value) || Object.keys(value).length === 0) {
      fault(
        here,
        `must be an object of one or more operators (${Object.keys(operators).join(', ')})`,
      );
      return;
    }
    for (const [name, operand] of Object.entries(value)) {
      conditions += 1;
      const check = Object.hasOwn(operators, name) ? operators[name] : undefined;
      const wrong =
        check === undefined
          ? `is not an operator of ${key} (one of: ${Object.keys(operators).join(', ')})`
          : check(operand);
      if (wrong !== undefined) fault(`${here}/${segment(name)}`, wrong);
    }
  };

  visit(value, pointer, 0);
  if (conditions > maxConditions)
    fault(pointer, `has ${conditions} conditions; at most ${maxConditions} (each operator is one)`);
  return { issues, notListed };
}

/** A request's filter that is not a sound TaskFilter: a 400 listing where and what. */
export class InvalidFilterError extends ProblemError {
  constructor(issues: ValidationIssue[], notListed: number) {
    const listed = issues.map((issue) => `body ${issue.pointer} ${issue.message}`).join('; ');
    const more = notListed > 0 ? `; and ${notListed} more places not listed` : '';
    super('invalid-request', `The request does not match the contract: ${listed}${more}.`, {
      errors: issues,
      errorsNotListed: notListed,
    });
  }
}

/**
 * The filter, typed, when it is sound; else InvalidFilterError. `pointer` is where the request
 * carries it (`/filter`).
 */
export function checkTaskFilter(value: unknown, pointer: string): TaskFilter {
  const { issues, notListed } = taskFilterIssues(value, pointer);
  if (issues.length > 0) throw new InvalidFilterError(issues, notListed);
  return value as TaskFilter;
}
