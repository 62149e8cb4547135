/**
 * The serializers compiled from the document's response schemas must write what JSON.stringify
 * would, as data: every field the document shows, nullable ones as null, nothing dropped.
 */
import { OpenAPIBackend, type Operation } from 'openapi-backend';
import { loadDocument } from '../../src/http/document';
import type { HttpReply } from '../../src/http/http-reply';
import { responseBodies, type WriteBody } from '../../src/http/response-bodies';

type Schema = Record<string, unknown>;
interface MediaType {
  schema: Schema;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}

let operations: Operation[];
let problemSchema: Schema;
let writeBody: WriteBody;

beforeAll(async () => {
  const api = new OpenAPIBackend({ definition: loadDocument().definition, quick: true });
  await api.init();
  operations = api.router.getOperations();
  problemSchema = (api.definition.components!.schemas as Record<string, Schema>).Problem;
  writeBody = responseBodies(operations, problemSchema);
});

/** Every documented response body: operationId, status, media type, and its schema and examples. */
function documentedBodies(): Array<{
  operationId: string;
  status: number;
  type: string;
  media: MediaType;
}> {
  return operations.flatMap((operation) =>
    Object.entries(operation.responses ?? {}).flatMap(([status, response]) =>
      Object.entries((response as { content?: Record<string, MediaType> }).content ?? {}).map(
        ([type, media]) => ({
          operationId: operation.operationId!,
          status: Number(status),
          type,
          media,
        }),
      ),
    ),
  );
}

const reply = (
  status: number,
  body: unknown,
  contentType?: HttpReply['contentType'],
): HttpReply => ({ status, body, contentType, headers: {} });

describe('response bodies', () => {
  it('writes every example the document gives a response as the same data', () => {
    let checked = 0;
    for (const { operationId, status, type, media } of documentedBodies()) {
      const examples = [
        media.example,
        media.schema.example,
        ...Object.values(media.examples ?? {}).map((e) => e.value),
      ].filter((e) => e !== undefined);
      for (const example of examples) {
        const text = writeBody(
          reply(status, example, type as HttpReply['contentType']),
          operationId,
          'req-1',
        );
        const expected =
          type === 'application/problem+json'
            ? { ...(example as object), request_id: 'req-1' }
            : example;
        expect({ operationId, status, body: JSON.parse(text!) }).toEqual({
          operationId,
          status,
          body: expected,
        });
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('writes a null description as null, and leaves out an optional field that is absent', () => {
    const task = {
      task_id: 't',
      project_id: 'p',
      title: 'x',
      description: null,
      status: 'pending',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
      completed_at: null,
      priority: 'none',
      due_on: null,
      labels: [],
      assignee: null,
    };
    expect(JSON.parse(writeBody(reply(200, task), 'getTask', 'r')!)).toEqual(task);
    expect(
      JSON.parse(
        writeBody(reply(200, { data: [task], next_cursor: null }), 'listProjectTasks', 'r')!,
      ),
    ).toEqual({ data: [task], next_cursor: null });
    const problem = {
      type: '/problems/not-found',
      title: 'Not found',
      status: 404,
      detail: 'No such task.',
    };
    expect(
      JSON.parse(writeBody(reply(404, problem, 'application/problem+json'), 'getTask', 'r')!),
    ).toEqual({ ...problem, request_id: 'r' });
  });

  it("keeps a problem's extension members: the Problem schema leaves them open, as RFC 9457 does", () => {
    const problem = {
      type: '/problems/x',
      title: 'X',
      status: 400,
      detail: 'x',
      extension: { a: [1] },
    };
    expect(
      JSON.parse(writeBody(reply(400, problem, 'application/problem+json'), undefined, 'r')!),
    ).toEqual({ ...problem, request_id: 'r' });
  });

  it('answers a status the operation does not document whole, and no body as none', () => {
    expect(writeBody(reply(299, { anything: [1, null] }), 'getTask', 'r')).toBe(
      '{"anything":[1,null]}',
    );
    expect(writeBody({ status: 204, headers: {} }, 'deleteTask', 'r')).toBeUndefined();
  });

  it('refuses a body that lacks a field its schema requires, rather than write a broken answer', () => {
    expect(() => writeBody(reply(200, { task_id: 't' }), 'getTask', 'r')).toThrow(/required/);
  });

  it('has one schema for every problem document, and no other object schema that leaves fields open', () => {
    const open: string[] = [];
    const seen = new Set<unknown>();
    const walk = (schema: unknown, where: string) => {
      if (schema === null || typeof schema !== 'object' || seen.has(schema)) return;
      seen.add(schema);
      const s = schema as Schema;
      if (
        s !== problemSchema &&
        (s.type === 'object' || s.properties !== undefined) &&
        s.additionalProperties === undefined
      )
        open.push(where);
      for (const [key, value] of Object.entries(s))
        if (key !== 'example' && key !== 'examples') walk(value, `${where}/${key}`);
    };
    for (const { operationId, status, type, media } of documentedBodies()) {
      if (type === 'application/problem+json')
        expect({ operationId, status, problem: media.schema === problemSchema }).toEqual({
          operationId,
          status,
          problem: true,
        });
      walk(media.schema, `${operationId} ${status}`);
    }
    // The serializers write the members of an open schema only at its top level (Problem's).
    expect(open).toEqual([]);
  });
});
