/**
 * A body of more unknown fields than a problem lists is refused from its text, before it is
 * parsed: JSON.parse would build an object of thousands of keys (a 64 KiB body holds 6,300), and
 * ajv then describe each of them, only for all but the first few to be counted. The problem is
 * the one validation gives: the required fields missing, the first unknown fields, and how many
 * more. A text that is not strict JSON is left to the parser, which says so.
 */
import type { Operation } from 'openapi-backend';
import { topLevelKeys } from './json-top-level-keys';
import { ProblemError } from './problems';
import { describeIssues, maxIssues, validationIssues, type FieldHints } from './validation-issues';

/** Looks at a body's raw bytes (valid UTF-8) before it is parsed; throws the problem it finds. */
export type RawBodyCheck = (raw: Buffer) => void;

const colon = 0x3a;
const checks = new WeakMap<Operation, RawBodyCheck | null>();

/** Whether `raw` has more than `count` colons: fewer, and it cannot hold that many keys. */
function hasMoreColonsThan(raw: Buffer, count: number): boolean {
  let at = -1;
  for (let seen = 0; seen <= count; seen++) {
    at = raw.indexOf(colon, at + 1);
    if (at === -1) return false;
  }
  return true;
}

function floodCheck(operation: Operation, known: Set<string>, required: string[]): RawBodyCheck {
  const hints = (operation as { 'x-field-hints'?: FieldHints })['x-field-hints'];
  return (raw) => {
    if (!hasMoreColonsThan(raw, maxIssues)) return;
    const keys = topLevelKeys(raw.toString('utf8'));
    if (keys === undefined) return;
    // One pass, one hash of each key: the first unknown fields by name, the rest counted (a repeated key once).
    const sent = new Set<string>();
    const firstUnknown: string[] = [];
    let unknownCount = 0;
    for (const key of keys) {
      const before = sent.size;
      if (sent.add(key).size === before || known.has(key)) continue;
      if (unknownCount++ < maxIssues) firstUnknown.push(key);
    }
    if (unknownCount <= maxIssues) return;
    const missing = required.filter((field) => !sent.has(field));
    const error = (keyword: string, params: object) => ({ keyword, instancePath: '/requestBody', params, schemaPath: '', message: '' });
    const errors = [
      ...missing.map((field) => error('required', { missingProperty: field })),
      ...firstUnknown.map((field) => error('additionalProperties', { additionalProperty: field })),
    ];
    const { issues } = validationIssues(errors, hints);
    const notListed = missing.length + unknownCount - issues.length;
    throw new ProblemError('invalid-request', describeIssues(issues, notListed), { errors: issues, errorsNotListed: notListed });
  };
}

/** The check for an operation whose JSON body allows no fields but its own; undefined for others. Made once per operation. */
export function unknownFieldFloodCheck(operation: Operation): RawBodyCheck | undefined {
  let check = checks.get(operation);
  if (check === undefined) {
    const body = operation.requestBody as { content?: Record<string, { schema?: { additionalProperties?: unknown; properties?: object; required?: string[] } }> } | undefined;
    const schema = body?.content?.['application/json']?.schema;
    check = schema?.additionalProperties === false ? floodCheck(operation, new Set(Object.keys(schema.properties ?? {})), schema.required ?? []) : null;
    checks.set(operation, check);
  }
  return check ?? undefined;
}
