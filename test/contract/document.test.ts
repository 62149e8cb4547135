/**
 * The document's own consistency: its examples obey its schemas, every operation states what
 * the rest of the system relies on, and the problem types it lists are the ones the service makes.
 */
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, OpenAPIValidator } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { loadDocument } from '../../src/http/document';
import { problemKinds } from '../../src/http/problems';

const api = new OpenAPIBackend({
  definition: loadDocument().definition,
  // quick: no check of the document against openapi-schema-validator's OpenAPI 3.0 schema, which
  // refuses every object as a link's requestBody (its oneOf of "any" and "an object" matches an
  // object twice); npm run lint checks the document against the official schema (oas3-schema).
  quick: true,
  customizeAjv: (a) => addFormats(a),
});
let document: OpenAPIV3.Document;
const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));

beforeAll(async () => {
  await api.init();
  // Dereferenced: every $ref, examples included, is replaced by what it points to.
  document = api.definition as OpenAPIV3.Document;
});

/**
 * Compiles a dereferenced schema as openapi-backend's validator does: a recursive one (TaskFilter)
 * made a schema with $refs first, which ajv needs. The method is private in its types only.
 */
const compileDecycled = (
  OpenAPIValidator as unknown as {
    compileSchema(ajv: Ajv, schema: object): ValidateFunction;
  }
).compileSchema.bind(OpenAPIValidator);

/** Every (where, schema, example) in the document. */
function examples(
  node: unknown,
  where: string,
  found: Array<[string, object, unknown]> = [],
  // A recursive schema (TaskFilter's parts refer to it) is one object met again: walked once.
  walked = new WeakSet<object>(),
): Array<[string, object, unknown]> {
  if (node === null || typeof node !== 'object' || walked.has(node)) return found;
  walked.add(node);
  const object = node as Record<string, unknown>;
  if (object.schema && 'example' in object)
    found.push([where, object.schema as object, object.example]);
  if (object.schema && object.examples) {
    for (const [name, example] of Object.entries(
      object.examples as Record<string, { value: unknown }>,
    )) {
      found.push([`${where} examples.${name}`, object.schema as object, example.value]);
    }
  }
  if (
    ('type' in object || 'properties' in object || 'allOf' in object || 'oneOf' in object) &&
    'example' in object &&
    !('schema' in object)
  ) {
    found.push([where, object, object.example]);
  }
  for (const [key, value] of Object.entries(object))
    examples(value, `${where}/${key}`, found, walked);
  return found;
}

it('has examples that obey their schemas, for every request and response', () => {
  const all = examples(document, '#');
  expect(all.length).toBeGreaterThan(50);
  const broken = all.flatMap(([where, schema, example]) => {
    const validate = compileDecycled(ajv, schema);
    return validate(example) ? [] : [`${where}: ${ajv.errorsText(validate.errors)}`];
  });
  expect(broken).toEqual([]);

  for (const operation of api.router.getOperations()) {
    const bodies = Object.values(
      (operation.requestBody as OpenAPIV3.RequestBodyObject | undefined)?.content ?? {},
    );
    const responses = Object.values(operation.responses ?? {}) as OpenAPIV3.ResponseObject[];
    for (const media of [...bodies, ...responses.flatMap((r) => Object.values(r.content ?? {}))]) {
      expect([
        operation.operationId,
        media.example !== undefined || Object.keys(media.examples ?? {}).length > 0,
      ]).toEqual([operation.operationId, true]);
    }
  }
});

it('gives every operation a verb for a name, a scope, and the errors every operation can meet', () => {
  for (const operation of api.router.getOperations()) {
    const id = operation.operationId!;
    expect(id).toMatch(/^(create|list|get|update|delete|rotate|search)[A-Z]/);
    expect([id, (operation as unknown as Record<string, unknown>)['x-required-scope']]).toEqual([
      id,
      expect.stringMatching(/^(read|write)$/),
    ]);
    expect(operation.path.startsWith('/v1/')).toBe(true);
    for (const status of ['400', '401', '403', '500', '503'])
      expect([id, Object.keys(operation.responses!)]).toEqual([
        id,
        expect.arrayContaining([status]),
      ]);
    for (const [status, response] of Object.entries(operation.responses!) as Array<
      [string, OpenAPIV3.ResponseObject]
    >) {
      const media = Object.keys(response.content ?? {});
      if (Number(status) >= 400)
        expect([id, status, media]).toEqual([id, status, ['application/problem+json']]);
      else if (status !== '204' && status !== '304')
        expect([id, status, media]).toEqual([id, status, ['application/json']]);
    }
  }
});

it('lists exactly the problem types the service makes', () => {
  const problem = document.components!.schemas!.Problem as OpenAPIV3.SchemaObject;
  const listed = [...problem.description!.matchAll(/`\/problems\/([a-z-]+)`/g)].map((m) => m[1]);
  expect(listed.sort()).toEqual([...problemKinds].sort());
});
