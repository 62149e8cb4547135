/**
 * Checked before validation: what the schemas cannot say (text that cannot be stored as sent;
 * integers in a query spelt other than in plain decimal digits, which ajv's coercion would take
 * as numbers: `0x10`, `1e1`, `+5`, ` 5`). A body of more unknown fields than a problem lists was
 * refused before it was parsed (unknown-field-flood.ts).
 */
import type { Context, Operation } from 'openapi-backend';
import type { components } from '../../generated/api';
import { ProblemError } from './problems';
import { describeIssues } from './validation-issues';

type ValidationIssue = components['schemas']['ValidationIssue'];

const plainDecimal = /^[0-9]+$/;

/** RFC 6901: `~` and `/` in a key are escaped. */
const pointerSegment = (key: string) => key.toWellFormed().replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The places in a JSON value where a string or a key is not well-formed Unicode: JSON can spell a
 * lone surrogate (`"\ud800"`), which no database stores as sent. `path` is where the walk is; a
 * pointer is spelt out only for a place with a problem, as most bodies have none.
 */
function illFormedText(value: unknown, path: string[], issues: ValidationIssue[]): void {
  const pointer = (segments: string[]) => segments.map((segment) => '/' + pointerSegment(segment)).join('');
  if (typeof value === 'string') {
    if (!value.isWellFormed()) issues.push({ in: 'body', pointer: pointer(path), message: 'is not valid Unicode: it holds a lone surrogate (such as \\ud800), which cannot be stored as sent' });
    return;
  }
  if (value === null || typeof value !== 'object') return;
  // An array's keys are its indexes. (Object.keys: for-in is slow on an object of many keys.)
  for (const key of Object.keys(value)) {
    if (!key.isWellFormed()) {
      issues.push({ in: 'body', pointer: pointer([...path, key]), message: 'is a field name that is not valid Unicode' });
      continue;
    }
    path.push(key);
    illFormedText((value as Record<string, unknown>)[key], path, issues);
    path.pop();
  }
}

const integerQueryParameters = new WeakMap<Operation, string[]>();

/** The operation's query parameters whose schema is an integer, found once per operation. */
function integerParametersOf(operation: Operation): string[] {
  let names = integerQueryParameters.get(operation);
  if (names === undefined) {
    const parameters = (operation.parameters ?? []) as Array<{ in?: string; name?: string; schema?: { type?: string } }>;
    names = parameters.filter((p) => p.in === 'query' && p.schema?.type === 'integer').map((p) => p.name!);
    integerQueryParameters.set(operation, names);
  }
  return names;
}

export function refuseIllFormedInput(context: Context): void {
  const issues: ValidationIssue[] = [];
  const query = context.request.query as Record<string, string | string[] | undefined>;
  for (const name of integerParametersOf(context.operation)) {
    const value = query[name];
    if (typeof value === 'string' && !plainDecimal.test(value)) issues.push({ in: 'query', name, message: 'must be a whole number in plain decimal digits (such as 20)' });
  }
  illFormedText(context.request.requestBody, [], issues);
  if (issues.length > 0) throw new ProblemError('invalid-request', describeIssues(issues), { errors: issues });
}
