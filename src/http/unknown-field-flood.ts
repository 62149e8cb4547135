/**
 * A body's text is read before it is parsed, for what would cost far more to refuse once parsed.
 * JSON.parse would build an object of thousands of keys (a 64 KiB body holds 6,300), and ajv
 * then describe each of them, only for all but the first few to be counted: a body of more
 * unknown fields than a problem lists is refused from its text, with the problem validation
 * gives (the required fields missing, the first unknown fields, and how many more). And a
 * top-level field that holds an object or an array where the operation takes none (an unknown
 * field, or one whose schema is not an object or an array) is refused whatever it holds: it is
 * emptied before the parse, which then builds nothing of its contents, and validation names it
 * as it would have. A text that is not strict JSON is left to the parser, which says so.
 */
import type { Operation } from 'openapi-backend';
import { topLevelFields } from './json-top-level-keys';
import { ProblemError } from '../errors';
import { describeIssues, maxIssues, validationIssues, type FieldHints } from './validation-issues';

/** Reads a body's text (valid UTF-8) before it is parsed: throws the problem it finds, or answers the text to parse. */
export type BodyTextCheck = (text: string) => string;

const checks = new WeakMap<Operation, BodyTextCheck | null>();

/** Whether `text` holds `character` more than `count` times. */
function holdsMoreThan(text: string, character: string, count: number): boolean {
  let at = -1;
  for (let seen = 0; seen <= count; seen++) {
    at = text.indexOf(character, at + 1);
    if (at === -1) return false;
  }
  return true;
}

/** Whether `text` may hold an object or an array inside the top-level one. */
const nests = (text: string) => holdsMoreThan(text, '{', 1) || text.includes('[');

interface BodySchema {
  properties?: Record<string, { type?: string }>;
  required?: string[];
}

/** The fields that may hold an object (`{`) or an array (`[`): those whose schema says so, or says no type at all. */
function containerFields(schema: BodySchema): Record<'{' | '[', Set<string>> {
  const fields = Object.entries(schema.properties ?? {});
  const taking = (type: string) =>
    new Set(
      fields
        .filter(([, field]) => field.type === undefined || field.type === type)
        .map(([name]) => name),
    );
  return { '{': taking('object'), '[': taking('array') };
}

function floodCheck(operation: Operation, schema: BodySchema): BodyTextCheck {
  const hints = (operation as { 'x-field-hints'?: FieldHints })['x-field-hints'];
  const known = new Set(Object.keys(schema.properties ?? {}));
  const required = schema.required ?? [];
  const takes = containerFields(schema);
  return (text) => {
    if (!holdsMoreThan(text, ':', maxIssues) && !nests(text)) return text;
    const fields = topLevelFields(text);
    if (fields === undefined) return text;
    const { keys, valueStarts, valueEnds } = fields;
    // One pass, one hash of each key: the first unknown fields by name, the rest counted (a repeated key once).
    const sent = new Set<string>();
    const firstUnknown: string[] = [];
    let unknownCount = 0;
    for (const key of keys) {
      const before = sent.size;
      if (sent.add(key).size === before || known.has(key)) continue;
      if (unknownCount++ < maxIssues) firstUnknown.push(key);
    }
    if (unknownCount > maxIssues)
      refuseFlood(
        required.filter((field) => !sent.has(field)),
        firstUnknown,
        unknownCount,
        hints,
      );
    let emptied = '';
    let copiedTo = 0;
    for (let i = 0; i < keys.length; i++) {
      const opening = text[valueStarts[i]];
      if (
        (opening !== '{' && opening !== '[') ||
        takes[opening].has(keys[i]) ||
        valueEnds[i] - valueStarts[i] === 2
      )
        continue;
      emptied += text.slice(copiedTo, valueStarts[i]) + (opening === '{' ? '{}' : '[]');
      copiedTo = valueEnds[i];
    }
    return copiedTo === 0 ? text : emptied + text.slice(copiedTo);
  };
}

function refuseFlood(
  missing: string[],
  firstUnknown: string[],
  unknownCount: number,
  hints: FieldHints | undefined,
): never {
  const error = (keyword: string, params: object) => ({
    keyword,
    instancePath: '/requestBody',
    params,
    schemaPath: '',
    message: '',
  });
  const errors = [
    ...missing.map((field) => error('required', { missingProperty: field })),
    ...firstUnknown.map((field) => error('additionalProperties', { additionalProperty: field })),
  ];
  const { issues } = validationIssues(errors, hints);
  const notListed = missing.length + unknownCount - issues.length;
  throw new ProblemError('invalid-request', describeIssues(issues, notListed), {
    errors: issues,
    errorsNotListed: notListed,
  });
}

/** The check for an operation whose JSON body allows no fields but its own; undefined for others. Made once per operation. */
export function unknownFieldFloodCheck(operation: Operation): BodyTextCheck | undefined {
  let check = checks.get(operation);
  if (check === undefined) {
    const body = operation.requestBody as
      | { content?: Record<string, { schema?: BodySchema & { additionalProperties?: unknown } }> }
      | undefined;
    const schema = body?.content?.['application/json']?.schema;
    check = schema?.additionalProperties === false ? floodCheck(operation, schema) : null;
    checks.set(operation, check);
  }
  return check ?? undefined;
}
