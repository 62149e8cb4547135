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
export const maxIssues = 20;
const maxTextLength = 1024;

const locations: Record<string, ValidationIssue['in']> = {
  requestBody: 'body',
  query: 'query',
  path: 'path',
  header: 'header',
};

/** Hints for fields a client may be expected to send by mistake, from the operation's `x-field-hints`. */
export type FieldHints = Record<string, string>;

/** Where an error is: the location, and the path within it (a field an error names included). */
function placeOf(
  error: ErrorObject,
): { location: ValidationIssue['in']; segments: string[]; key: string } | undefined {
  const [, root = '', ...rest] = error.instancePath.split('/');
  const location = locations[root];
  if (location === undefined) return undefined;
  let segments = rest;
  if (error.keyword === 'required') segments = [...rest, String(error.params.missingProperty)];
  else if (error.keyword === 'additionalProperties')
    segments = [...rest, String(error.params.additionalProperty)];
  // A body's place is a JSON pointer; a parameter is named as a whole (an array item's index goes into the message).
  return {
    location,
    segments,
    key: location === 'body' ? `body ${segments.join('/')}` : `${location} ${segments[0]}`,
  };
}

function messageOf(error: ErrorObject, location: ValidationIssue['in'], hints: FieldHints): string {
  if (error.keyword === 'pattern' && error.parentSchema?.description) {
    // A pattern says little to a person; the schema's description says what it means.
    return `does not match: ${error.parentSchema.description.trim()}`;
  }
  if (error.keyword === 'enum')
    return `must be one of: ${(error.params.allowedValues as unknown[]).join(', ')}`;
  if (error.keyword === 'required') return 'is required';
  if (error.keyword === 'minProperties' && location === 'body') {
    // "must NOT have fewer than 1 properties" says nothing of what to send: name the fields.
    const fields = Object.keys(
      (error.parentSchema as { properties?: object } | undefined)?.properties ?? {},
    );
    const some = fields.length > 0 ? ` (send one or more of ${fields.join(', ')})` : '';
    return Number(error.params.limit) === 1
      ? `names no field to change${some}`
      : `needs at least ${error.params.limit} fields${some}`;
  }
  if (error.keyword === 'additionalProperties') {
    const field = String(error.params.additionalProperty);
    const hint = Object.hasOwn(hints, field) ? hints[field] : undefined;
    return (
      hint ??
      (location === 'body'
        ? 'is not a field of this request'
        : 'is not a parameter of this operation')
    );
  }
  return error.message ?? 'is invalid';
}

function issueAt(
  { location, segments }: NonNullable<ReturnType<typeof placeOf>>,
  message: string,
): ValidationIssue {
  if (location === 'body')
    return {
      in: location,
      pointer: clamp(segments.map((s) => '/' + s).join(''), maxTextLength),
      message: clamp(message, maxTextLength),
    };
  const [name, ...item] = segments;
  const described = item.length > 0 ? `item ${item.join('/')} ${message}` : message;
  return {
    in: location,
    name: clamp(name, maxTextLength),
    message: clamp(described, maxTextLength),
  };
}

/**
 * One entry per place with a problem, the first `maxIssues` of them, and how many more places
 * there are. Past the first places, an error costs only the finding of its place: a body of
 * thousands of unknown fields is not described field by field.
 */
export function validationIssues(
  errors: ErrorObject[],
  hints: FieldHints = {},
): { issues: ValidationIssue[]; notListed: number } {
  const listed = new Map<string, ValidationIssue>();
  const notListed = new Set<string>();
  for (const error of errors) {
    const place = placeOf(error);
    if (place === undefined) continue;
    const earlier = listed.get(place.key);
    if (earlier === undefined && listed.size === maxIssues) {
      notListed.add(place.key);
      continue;
    }
    const issue = issueAt(place, messageOf(error, place.location, hints));
    // allErrors reports every rule a value breaks (say, both minLength and pattern): give each
    // place one entry that says all of it.
    if (earlier === undefined) listed.set(place.key, issue);
    else if (!earlier.message.split('; ').includes(issue.message))
      earlier.message = clamp(`${earlier.message}; ${issue.message}`, maxTextLength);
  }
  return { issues: [...listed.values()], notListed: notListed.size };
}

export function describeIssues(issues: ValidationIssue[], notListed = 0): string {
  const where = (issue: ValidationIssue) =>
    issue.in === 'body'
      ? `body ${issue.pointer === '' ? '(whole)' : issue.pointer}`
      : `${issue.in} ${issue.name}`;
  const more = notListed > 0 ? `; and ${notListed} more places not listed` : '';
  return `The request does not match the contract: ${issues.map((i) => `${where(i)} ${i.message}`).join('; ')}${more}.`;
}
