/**
 * Checked before validation: what the schemas cannot say (text that cannot be stored as sent;
 * integers in a query spelt other than in plain decimal digits, which ajv's coercion would take
 * as numbers: `0x10`, `1e1`, `+5`, ` 5`). A body of more unknown fields than a problem lists, or
 * nested too deep, was refused before it was parsed (unknown-field-flood.ts, json-body.ts).
 */
import type { Context, Operation } from 'openapi-backend';
import type { components } from '../../generated/api';
import { ProblemError } from '../errors';
import { describeIssues } from './validation-issues';

type ValidationIssue = components['schemas']['ValidationIssue'];

const plainDecimal = /^[0-9]+$/;

/** RFC 6901: `~` and `/` in a key are escaped. */
export const pointerSegment = (key: string) =>
  key.toWellFormed().replace(/~/g, '~0').replace(/\//g, '~1');

/** A container being walked: its keys (none listed for an array: its keys are its indexes), and the next to visit. */
interface Frame {
  container: Record<string, unknown> | unknown[];
  keys: string[] | undefined;
  next: number;
}

/** The key of the frame's child being visited. */
const currentKey = (frame: Frame) =>
  frame.keys === undefined ? String(frame.next - 1) : frame.keys[frame.next - 1];

/**
 * The places in a JSON value where a string or a key is not well-formed Unicode: JSON can spell a
 * lone surrogate (`"\ud800"`), which no database stores as sent. The walk keeps its own stack, so
 * no nesting can overflow the call stack; a pointer is spelt out only for a place with a problem,
 * as most bodies have none.
 */
function illFormedText(value: unknown, issues: ValidationIssue[]): void {
  const frames: Frame[] = [];
  const here = () => frames.map((frame) => '/' + pointerSegment(currentKey(frame))).join('');
  const visit = (child: unknown) => {
    if (typeof child === 'string') {
      if (!child.isWellFormed())
        issues.push({
          in: 'body',
          pointer: here(),
          message:
            'is not valid Unicode: it holds a lone surrogate (such as \\ud800), which cannot be stored as sent',
        });
    } else if (child !== null && typeof child === 'object') {
      // Object.keys: for-in is slow on an object of many keys.
      frames.push({
        container: child as Frame['container'],
        keys: Array.isArray(child) ? undefined : Object.keys(child),
        next: 0,
      });
    }
  };
  visit(value);
  while (frames.length > 0) {
    const frame = frames[frames.length - 1];
    const size =
      frame.keys === undefined ? (frame.container as unknown[]).length : frame.keys.length;
    if (frame.next === size) {
      frames.pop();
      continue;
    }
    const index = frame.next++;
    if (frame.keys === undefined) {
      visit((frame.container as unknown[])[index]);
    } else if (!frame.keys[index].isWellFormed()) {
      issues.push({
        in: 'body',
        pointer: here(),
        message: 'is a field name that is not valid Unicode',
      });
    } else {
      visit((frame.container as Record<string, unknown>)[frame.keys[index]]);
    }
  }
}

const integerQueryParameters = new WeakMap<Operation, string[]>();

/** The operation's query parameters whose schema is an integer, found once per operation. */
function integerParametersOf(operation: Operation): string[] {
  let names = integerQueryParameters.get(operation);
  if (names === undefined) {
    const parameters = (operation.parameters ?? []) as Array<{
      in?: string;
      name?: string;
      schema?: { type?: string };
    }>;
    names = parameters
      .filter((p) => p.in === 'query' && p.schema?.type === 'integer')
      .map((p) => p.name!);
    integerQueryParameters.set(operation, names);
  }
  return names;
}

export function refuseIllFormedInput(context: Context): void {
  const issues: ValidationIssue[] = [];
  const query = context.request.query as Record<string, string | string[] | undefined>;
  for (const name of integerParametersOf(context.operation)) {
    const value = query[name];
    if (typeof value === 'string' && !plainDecimal.test(value))
      issues.push({
        in: 'query',
        name,
        message: 'must be a whole number in plain decimal digits (such as 20)',
      });
  }
  illFormedText(context.request.requestBody, issues);
  if (issues.length > 0)
    throw new ProblemError('invalid-request', describeIssues(issues), { errors: issues });
}
