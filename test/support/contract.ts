/**
 * Checks every response a test receives against the OpenAPI document: the status must be one
 * the operation documents, and the media type, body and required headers must be as documented.
 * So every test is also a test that the document tells the truth.
 */
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, OpenAPIValidator, type Document, type Operation } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { loadDocument } from '../../src/http/document';
import { madeVersionSet } from '../../src/http/older-versions';

// For their routers and dereferenced documents only: the ajv below checks the responses, and the
// linters and test/contract check the documents, so openapi-backend builds no validators of its own.
// An answer is checked against the document of the version it names (Api-Version), the newest's
// when it names none.
const backendOf = (definition: Document) =>
  new OpenAPIBackend({ definition, quick: true, validate: false });
const newest = backendOf(loadDocument().definition);
const older = new Map(
  [...madeVersionSet().documents].map(([version, definition]) => [version, backendOf(definition)]),
);
const ready = Promise.all([newest, ...older.values()].map((backend) => backend.init()));
const ajv = addFormats(new Ajv({ strict: false, allErrors: true, coerceTypes: false }));
const compiled = new Map<object, ValidateFunction>();
/**
 * Compiles a dereferenced schema as openapi-backend's validator does: a recursive one (TaskFilter)
 * made a schema with $refs first, which ajv needs. The method is private in its types only.
 */
const compileDecycled = (
  OpenAPIValidator as unknown as { compileSchema(ajv: Ajv, schema: object): ValidateFunction }
).compileSchema.bind(OpenAPIValidator);

function validatorFor(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = compileDecycled(ajv, schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** The documented response for this request and status, and where it is documented. */
function documentedResponse(
  api: OpenAPIBackend,
  method: string,
  path: string,
  status: number,
): { response: OpenAPIV3.ResponseObject; where: string } {
  const definition = api.definition as OpenAPIV3.Document;
  const routingErrors = (
    definition as unknown as { 'x-routing-errors': Record<string, OpenAPIV3.ResponseObject> }
  )['x-routing-errors'];
  const routingError = () => ({
    response: routingErrors[status],
    where: `x-routing-errors ${status}`,
  });
  // What HTTP itself refuses (a malformed request, a timeout, headers too large) is answered
  // before routing, whatever the path: x-routing-errors besides 404 and 405.
  const beforeRouting = status !== 404 && status !== 405 && routingErrors[status] !== undefined;
  const operation = api.router.matchOperation({ method, path, headers: {} }) as
    Operation | undefined;
  if (operation) {
    const response = operation.responses?.[String(status)] as OpenAPIV3.ResponseObject | undefined;
    if (response) return { response, where: `${operation.operationId} ${status}` };
    if (beforeRouting) return routingError();
    throw new Error(`${operation.operationId} does not document status ${status}`);
  }
  // A request that matches no operation: the document's x-routing-errors say what it gets.
  const pathExists = api.router
    .getOperations()
    .some((op) => new RegExp('^' + op.path.replace(/\{[^}]+\}/g, '[^/]+') + '/?$').test(path));
  const expected = pathExists ? 405 : 404;
  if (status !== expected && !beforeRouting)
    throw new Error(`${method} ${path} matches no operation: expected ${expected}, got ${status}`);
  return routingError();
}

export interface ReceivedResponse {
  status: number;
  headers: Headers;
  text: string;
}

/** Throws, naming the rule broken, when the response is not as the document says. */
export async function assertConformsToContract(
  method: string,
  path: string,
  received: ReceivedResponse,
): Promise<void> {
  await ready;
  const version = received.headers.get('api-version');
  const api = (version !== null && older.get(version)) || newest;
  const { response, where } = documentedResponse(api, method.toLowerCase(), path, received.status);
  const problems: string[] = [];

  for (const [name, header] of Object.entries(response.headers ?? {}) as Array<
    [string, OpenAPIV3.HeaderObject]
  >) {
    const value = received.headers.get(name);
    if (value === null) {
      if (header.required) problems.push(`header ${name} is required`);
      continue;
    }
    const schema = header.schema as OpenAPIV3.SchemaObject;
    const parsed = schema.type === 'integer' ? Number(value) : value;
    if (!validatorFor(schema)(parsed)) problems.push(`header ${name}=${value} breaks its schema`);
  }

  const contentType = received.headers.get('content-type');
  if (!response.content) {
    if (received.text !== '') problems.push('documents no body, but one was sent');
  } else {
    const mediaType = contentType?.split(';')[0].trim() ?? '';
    const content = response.content[mediaType];
    if (!content) {
      problems.push(
        `content type ${contentType} is not one of ${Object.keys(response.content).join(', ')}`,
      );
    } else {
      if (!/charset=utf-8/i.test(contentType ?? ''))
        problems.push(`content type ${contentType} has no charset=utf-8`);
      const body = JSON.parse(received.text);
      const validate = validatorFor(content.schema as object);
      if (!validate(body))
        problems.push(`body breaks the schema: ${ajv.errorsText(validate.errors)}`);
      if (mediaType === 'application/problem+json' && body.status !== received.status) {
        problems.push(`problem status ${body.status} differs from HTTP status ${received.status}`);
      }
    }
  }
  if (problems.length > 0) {
    throw new Error(
      `${method} ${path} → ${received.status} breaks the contract (${where}):\n- ${problems.join('\n- ')}\n${received.text}`,
    );
  }
}
