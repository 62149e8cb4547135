/**
 * The differences between two OpenAPI documents that a client could see: every path, operation,
 * parameter, header, schema and response, compared with `$ref`s as written (not inlined), so that
 * each difference is named by a JSON pointer to one place in the file. Prose is left out first.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Json, JsonObject } from './change';

export type DifferenceKind = 'added' | 'removed' | 'changed';

/**
 * `added` and `changed` name the place in the second (made) document, `removed` the place in the
 * first (released) one; `before` and `after` are the values there (absent where there is none).
 */
export interface Difference {
  pointer: string;
  kind: DifferenceKind;
  before?: Json;
  after?: Json;
}

/**
 * Prose: what only describes, so that a client sends and receives the same without it. Where an
 * OpenAPI object has these keys they are left out: descriptions, summaries, titles, examples
 * (`components/examples` too), external docs and tags (operations' and the document's); and the
 * whole `info` (title, description, version, contact, licence). Everything else is compared,
 * `x-` extensions, `default`, `deprecated`, `servers` and `security` included.
 */
const proseKeys = new Set([
  'description',
  'summary',
  'title',
  'example',
  'examples',
  'externalDocs',
  'tags',
]);

/** Keys whose value maps names to OpenAPI objects: its keys are names, never prose to drop. */
const nameMapKeys = new Set([
  'paths',
  'schemas',
  'properties',
  'responses',
  'parameters',
  'headers',
  'content',
  'links',
  'requestBodies',
  'securitySchemes',
  'encoding',
  'variables',
]);

/** Keys whose value is data (a value, a list of names, an extension), kept and compared as it is. */
const dataKeys = new Set(['enum', 'default', 'required', 'security', 'mapping', 'scopes']);

type Kind = 'object' | 'names' | 'callbacks' | 'data';

function isObject(value: Json | undefined): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function withoutProseAt(node: Json, kind: Kind): Json {
  if (kind === 'data' || node === null || typeof node !== 'object') return node;
  if (Array.isArray(node)) return node.map((item) => withoutProseAt(item, kind));
  const kept: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (kind === 'names') kept[key] = withoutProseAt(value, 'object');
    else if (kind === 'callbacks') kept[key] = withoutProseAt(value, 'names');
    else if (proseKeys.has(key)) continue;
    else if (key.startsWith('x-') || dataKeys.has(key)) kept[key] = value;
    else if (key === 'callbacks') kept[key] = withoutProseAt(value, 'callbacks');
    else if (nameMapKeys.has(key) && isObject(value)) kept[key] = withoutProseAt(value, 'names');
    else kept[key] = withoutProseAt(value, 'object');
  }
  return kept;
}

/** A copy of an OpenAPI document without its prose (see `proseKeys`). */
export function withoutProse(document: JsonObject): JsonObject {
  const { info: _info, ...rest } = document;
  return withoutProseAt(rest, 'object') as JsonObject;
}

const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * What tells an element of a list from the others wherever it stands: a value, a `$ref`, or a
 * parameter's place and name. Lists whose elements all have one are compared as sets (the order
 * of enum values, required fields or parameters says nothing); other lists element by element.
 */
function identity(item: Json): string | undefined {
  if (!isObject(item)) return `value ${JSON.stringify(item)}`;
  if (typeof item.$ref === 'string') return `ref ${item.$ref}`;
  if (typeof item.in === 'string' && typeof item.name === 'string')
    return `parameter ${item.in} ${item.name}`;
  return undefined;
}

function identities(list: Json[]): Map<string, number> | undefined {
  const found = new Map<string, number>();
  for (const [index, item] of list.entries()) {
    const id = identity(item);
    if (id === undefined || found.has(id)) return undefined;
    found.set(id, index);
  }
  return found;
}

function compareLists(before: Json[], after: Json[], pointer: string, out: Difference[]): void {
  const was = identities(before);
  const is = identities(after);
  if (was && is) {
    for (const [id, index] of was)
      if (!is.has(id))
        out.push({ pointer: `${pointer}/${index}`, kind: 'removed', before: before[index] });
    for (const [id, index] of is) {
      const old = was.get(id);
      if (old === undefined)
        out.push({ pointer: `${pointer}/${index}`, kind: 'added', after: after[index] });
      else compare(before[old], after[index], `${pointer}/${index}`, out);
    }
    return;
  }
  for (let index = 0; index < Math.max(before.length, after.length); index++) {
    const at = `${pointer}/${index}`;
    if (index >= after.length) out.push({ pointer: at, kind: 'removed', before: before[index] });
    else if (index >= before.length) out.push({ pointer: at, kind: 'added', after: after[index] });
    else compare(before[index], after[index], at, out);
  }
}

function compare(before: Json, after: Json, pointer: string, out: Difference[]): void {
  if (isDeepStrictEqual(before, after)) return;
  // Another target, or a reference where there was a value: one change, not one per key.
  const refChanged = isObject(before) && isObject(after) && before.$ref !== after.$ref;
  if (isObject(before) && isObject(after) && !refChanged) {
    for (const key of Object.keys(before))
      if (!(key in after))
        out.push({ pointer: `${pointer}/${escape(key)}`, kind: 'removed', before: before[key] });
    for (const key of Object.keys(after)) {
      const at = `${pointer}/${escape(key)}`;
      if (!(key in before)) out.push({ pointer: at, kind: 'added', after: after[key] });
      else compare(before[key], after[key], at, out);
    }
  } else if (Array.isArray(before) && Array.isArray(after))
    compareLists(before, after, pointer, out);
  else out.push({ pointer, kind: 'changed', before, after });
}

/** Every difference a client could see between `released` and `made`, prose aside. */
export function diffDocuments(released: JsonObject, made: JsonObject): Difference[] {
  const out: Difference[] = [];
  compare(withoutProse(released), withoutProse(made), '', out);
  return out;
}

/** A value in one short line. */
export function shorten(value: Json | undefined, length = 80): string {
  if (value === undefined) return '(none)';
  const text = JSON.stringify(value);
  return text.length <= length ? text : `${text.slice(0, length - 1)}…`;
}

/** `changed /components/schemas/Task/type: "object" -> "string"`, and the like. */
export function formatDifference({ pointer, kind, before, after }: Difference): string {
  if (kind === 'added') return `added ${pointer}: ${shorten(after)}`;
  if (kind === 'removed') return `removed ${pointer}: ${shorten(before)}`;
  return `changed ${pointer}: ${shorten(before)} -> ${shorten(after)}`;
}
