/**
 * Response bodies are written by serializers that fast-json-stringify compiles once, at start,
 * from the document's response schemas: code that knows each field's type and writes it in
 * place, where JSON.stringify inspects every value of every body. The document's responses share
 * a few distinct schemas, so compiling them all at start is cheap.
 */
import fastJson from 'fast-json-stringify';
import type { Operation } from 'openapi-backend';
import type { HttpReply } from './http-reply';

type Schema = Record<string, unknown>;
type Serialize = (body: unknown) => string;

/** The text of a reply's body; undefined when it has none. A problem names the request it answers, as X-Request-Id does. */
export type WriteBody = (
  reply: HttpReply,
  operationId: string | undefined,
  requestId: string,
) => string | undefined;

/**
 * A dereferenced schema with each place where it holds itself again (a TaskFilter's `all` holds
 * TaskFilters) made `{}`, any value, which fast-json-stringify writes as JSON.stringify does: it
 * would recurse for ever on a circular schema. A schema without such a place is answered as it is.
 */
function withoutCycles<T extends object>(node: T, within = new Set<object>()): T {
  within.add(node);
  let copy: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(node)) {
    if (value === null || typeof value !== 'object') continue;
    const inner = within.has(value) ? {} : withoutCycles(value as object, within);
    if (inner !== value)
      (copy ??= (Array.isArray(node) ? [...node] : { ...node }) as Record<string, unknown>)[key] =
        inner;
  }
  within.delete(node);
  return (copy as T | undefined) ?? node;
}

/**
 * `operations` are the dereferenced document's, and `problemSchema` the one schema of every
 * problem document (a test holds the document to that).
 */
export function responseBodies(operations: Operation[], problemSchema: Schema): WriteBody {
  const compiled = new Map<Schema, Serialize>();
  const compile = (schema: Schema): Serialize => {
    let serialize = compiled.get(schema);
    if (serialize === undefined) {
      // fast-json-stringify leaves out members a schema does not list unless told otherwise; a
      // schema that leaves additionalProperties open (Problem: RFC 9457 allows extension
      // members) allows them, as JSON Schema reads it, so they are written.
      const acyclic = withoutCycles(schema);
      serialize = fastJson(
        acyclic.type === 'object' && acyclic.additionalProperties === undefined
          ? { ...acyclic, additionalProperties: true }
          : acyclic,
      );
      compiled.set(schema, serialize);
    }
    return serialize;
  };
  const problem = compile(problemSchema);
  const json = new Map<string, Map<number, Serialize>>();
  for (const operation of operations) {
    const byStatus = new Map<number, Serialize>();
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      const schema = (response as { content?: Record<string, { schema?: Schema }> }).content?.[
        'application/json'
      ]?.schema;
      if (schema !== undefined) byStatus.set(Number(status), compile(schema));
    }
    json.set(operation.operationId!, byStatus);
  }
  return (reply, operationId, requestId) => {
    if (reply.body === undefined) return undefined;
    if (reply.contentType === 'application/problem+json')
      return problem({ ...(reply.body as object), request_id: requestId });
    // A status the operation does not document (the tests would fail on it) is still answered whole.
    const serialize =
      (operationId === undefined ? undefined : json.get(operationId)?.get(reply.status)) ??
      JSON.stringify;
    return serialize(reply.body);
  };
}
