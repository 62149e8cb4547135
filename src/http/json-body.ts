/**
 * A request body's bytes become its JSON value, or its problem: bytes that are not UTF-8 and text
 * that is not JSON are malformed-json, a body nested too deep is refused before it is parsed
 * (naming where), and the operation's check reads the text first (unknown-field-flood.ts).
 */
import { isUtf8 } from 'node:buffer';
import type { components } from '../../generated/api';
import { maxDepth, tooDeepAt } from './json-depth';
import { ProblemError } from '../errors';
import { clamp } from './problems';
import type { BodyTextCheck } from './unknown-field-flood';
import { describeIssues } from './validation-issues';

type ValidationIssue = components['schemas']['ValidationIssue'];

/** The document's limit on a pointer's length. */
const maxPointerLength = 1024;

/** JSON's whitespace (RFC 8259), which may come before the top-level value. */
const whitespace = new Set([0x20, 0x09, 0x0a, 0x0d]);
const leftBrace = 0x7b;
const leftBracket = 0x5b;

/** The body's value; an empty body is `{}`, which the schema then judges. */
export function parseJsonBody(raw: Buffer, check?: BodyTextCheck): unknown {
  // JSON is UTF-8 (RFC 8259), and a decoder would quietly turn bytes that are not into U+FFFD:
  // refuse them instead, so nothing is stored other than as sent.
  if (!isUtf8(raw))
    throw new ProblemError('malformed-json', 'The request body is not valid UTF-8.');
  if (raw.length === 0) return {};
  let first = 0;
  while (whitespace.has(raw[first])) first++;
  // Only an object or an array is a body; a bare string or number is not what any operation takes.
  if (raw[first] !== leftBrace && raw[first] !== leftBracket)
    throw new ProblemError('malformed-json', 'The request body is not valid JSON.');
  const tooDeep = tooDeepAt(raw);
  if (tooDeep !== undefined) {
    const issue: ValidationIssue = {
      in: 'body',
      pointer: clamp(tooDeep, maxPointerLength),
      message: `is nested more than ${maxDepth} levels deep`,
    };
    throw new ProblemError('invalid-request', describeIssues([issue]), { errors: [issue] });
  }
  const text = raw.toString('utf8');
  try {
    return JSON.parse(check === undefined ? text : check(text));
  } catch (error) {
    if (error instanceof ProblemError) throw error;
    throw new ProblemError('malformed-json', 'The request body is not valid JSON.');
  }
}
