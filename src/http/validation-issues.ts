/**
 * Ajv's errors, as openapi-backend reports them, become the `errors` list of an
 * invalid-request problem: one entry per problem, saying where (`in` and a JSON pointer into
 * the body, or a parameter's name) and what.
 */
import type { ErrorObject } from 'ajv';
import type { components } from '../../generated/api';
import { clamp } from './problems';

type ValidationIssue = components['schemas']['ValidationIssue'];

/** The document's limits on an `errors` list and on each entry's text. */
const maxIssues = 100;
const maxTextLength = 1024;

const locations: Record<string, ValidationIssue['in']> = {
  requestBody: 'body',
  query: 'query',
  path: 'path',
  header: 'header',
};

/** Hints for fields a client may be expected to send by mistake, from the operation's `x-field-hints`. */
export type FieldHints = Record<string, string>;

export function validationIssues(errors: ErrorObject[], hints: FieldHints = {}): ValidationIssue[] {
  const issues = errors.flatMap((error): ValidationIssue[] => {
    const [, root = '', ...rest] = error.instancePath.split('/');
    const location = locations[root];
    if (location === undefined) return [];
    let segments = rest;
    let message = error.message ?? 'is invalid';
    if (error.keyword === 'pattern' && error.parentSchema?.description) {
      // A pattern says little to a person; the schema's description says what it means.
      message = `does not match: ${error.parentSchema.description.trim()}`;
    } else if (error.keyword === 'enum') {
      message = `must be one of: ${(error.params.allowedValues as unknown[]).join(', ')}`;
    } else if (error.keyword === 'required') {
      segments = [...rest, String(error.params.missingProperty)];
      message = 'is required';
    } else if (error.keyword === 'additionalProperties') {
      const field = String(error.params.additionalProperty);
      segments = [...rest, field];
      const hint = Object.hasOwn(hints, field) ? hints[field] : undefined;
      message = hint ?? (location === 'body' ? 'is not a field of this request' : 'is not a parameter of this operation');
    }
    if (location === 'body') {
      return [{ in: location, pointer: clamp(segments.map((s) => '/' + s).join(''), maxTextLength), message: clamp(message, maxTextLength) }];
    }
    // A parameter is named as a whole; an array item's index goes into the message.
    const [name, ...item] = segments;
    const described = item.length > 0 ? `item ${item.join('/')} ${message}` : message;
    return [{ in: location, name: clamp(name, maxTextLength), message: clamp(described, maxTextLength) }];
  });
  // allErrors reports every rule a value breaks (say, both minLength and pattern): give each
  // place one entry that says all of it.
  const byPlace = new Map<string, ValidationIssue>();
  for (const issue of issues) {
    const place = `${issue.in} ${issue.pointer ?? issue.name}`;
    const earlier = byPlace.get(place);
    if (!earlier) byPlace.set(place, issue);
    else if (!earlier.message.split('; ').includes(issue.message)) earlier.message = clamp(`${earlier.message}; ${issue.message}`, maxTextLength);
  }
  return [...byPlace.values()].slice(0, maxIssues);
}

export function describeIssues(issues: ValidationIssue[]): string {
  const where = (issue: ValidationIssue) =>
    issue.in === 'body' ? `body ${issue.pointer === '' ? '(whole)' : issue.pointer}` : `${issue.in} ${issue.name}`;
  return `The request does not match the contract: ${issues.map((i) => `${where(i)} ${i.message}`).join('; ')}.`;
}
