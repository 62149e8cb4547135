/**
 * What the schemas cannot say, checked before validation: text that cannot be stored as sent, and
 * integers in a query spelt other than in plain decimal digits (ajv's coercion would take `0x10`,
 * `1e1`, `+5` or ` 5` as numbers).
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
 * lone surrogate (`"\ud800"`), which no database stores as sent.
 */
function illFormedText(value: unknown, pointer: string, issues: ValidationIssue[]): void {
  if (typeof value === 'string') {
    if (!value.isWellFormed()) issues.push({ in: 'body', pointer, message: 'is not valid Unicode: it holds a lone surrogate (such as \\ud800), which cannot be stored as sent' });
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => illFormedText(item, `${pointer}/${index}`, issues));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const at = `${pointer}/${pointerSegment(key)}`;
      if (!key.isWellFormed()) issues.push({ in: 'body', pointer: at, message: 'is a field name that is not valid Unicode' });
      else illFormedText(item, at, issues);
    }
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
  illFormedText(context.request.requestBody, '', issues);
  if (issues.length > 0) throw new ProblemError('invalid-request', describeIssues(issues), { errors: issues });
}
