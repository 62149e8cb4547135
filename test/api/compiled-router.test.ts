/**
 * The compiled router must route exactly as openapi-backend's own router does, for every path
 * shape a client can send: the document's paths, near misses, and paths of no operation.
 */
import addFormats from 'ajv-formats';
import { OpenAPIBackend, OpenAPIRouter, type Context, type Request } from 'openapi-backend';
import { CompiledRouter } from '../../src/http/shims/compiled-router';
import { loadDocument } from '../../src/http/document';

const id = '0196a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const paths = [
  '/v1/projects',
  '/v1/projects/',
  `/v1/projects/${id}`,
  `/v1/projects/${id}/`,
  `/v1/projects/${id}/tasks`,
  `/v1/projects/${id}/tasks/`,
  `/v1/projects/${id}/tasks/${id}`,
  '/v1/projects/tasks',
  '/v1/projects//tasks',
  '/v1/tasks',
  `/v1/tasks/${id}`,
  `/v1/tasks/${id}/status`,
  '/v1/tasks/a.b',
  '/v1/tasks/%2F',
  '/v1',
  '/',
  '',
  '/v2/tasks',
  '/V1/TASKS',
  '/v1/tasks?limit=5',
  `/v1/tasks/${id}?x=/`,
  '//v1/tasks',
  '/v1/projects/{project_id}',
];
const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'get'];

/** What a router makes of a request: an operationId, or the error it gives instead. */
function routed(router: OpenAPIRouter, request: Request): string {
  try {
    return router.matchOperation(request, true).operationId!;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * An OpenAPIBackend set up as the service's (coercion, defaults), with the stock router or the
 * compiled one, whose handlers answer with what they were given.
 */
async function handled(compiledRouter: boolean): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend({
    definition: loadDocument().definition,
    quick: true,
    coerceTypes: true,
    ajvOpts: { allErrors: true, useDefaults: true },
    customizeAjv: (ajv) => addFormats(ajv),
  });
  const seen = (kind: string) => (context: Context) => ({ kind, request: context.request });
  // Validation has filled the parse it checked with defaults by then; the service's handler reads only the errors.
  const failed = (context: Context) => ({
    kind: 'validationFail',
    errors: context.validation.errors,
  });
  api.register({
    notFound: seen('notFound'),
    methodNotAllowed: seen('methodNotAllowed'),
    validationFail: failed,
    unauthorizedHandler: seen('unauthorized'),
  });
  api.registerSecurityHandler('bearerAuth', () => true);
  await api.init();
  for (const operation of api.router.getOperations())
    api.register(operation.operationId!, seen(operation.operationId!));
  if (compiledRouter) api.router = api.validator.router = new CompiledRouter(api.definition);
  return api;
}

let stock: OpenAPIRouter;
let compiled: CompiledRouter;
let withStock: OpenAPIBackend;
let withCompiled: OpenAPIBackend;

beforeAll(async () => {
  const api = new OpenAPIBackend({ definition: loadDocument().definition, quick: true });
  await api.init();
  stock = api.router;
  compiled = new CompiledRouter(api.definition);
  [withStock, withCompiled] = await Promise.all([handled(false), handled(true)]);
});

describe('CompiledRouter routes as openapi-backend does', () => {
  it.each(methods.flatMap((method) => paths.map((path) => [method, path])))(
    '%s %s',
    (method, path) => {
      const request = { method, path, headers: {} };
      expect(routed(compiled, request)).toBe(routed(stock, request));
    },
  );

  it("routes each of the document's operations to itself", () => {
    for (const operation of stock.getOperations()) {
      const request = {
        method: operation.method,
        path: operation.path.replace(/\{[^}]+\}/g, id),
        headers: {},
      };
      expect(routed(compiled, request)).toBe(operation.operationId);
    }
  });

  it.each<Request>([
    {
      method: 'GET',
      path: `/v1/projects/${id}/tasks`,
      query: { limit: '5', status: ['done', 'pending'] },
      headers: { Authorization: 'Bearer x', Cookie: 'a=1' },
    },
    {
      method: 'GET',
      path: `/v1/projects/${id}/tasks`,
      query: { status: 'done' },
      headers: { authorization: 'Bearer x' },
    },
    { method: 'GET', path: `/v1/projects/${id}/tasks`, query: { limit: 'many' }, headers: {} },
    {
      method: 'PATCH',
      path: `/v1/tasks/${id}/`,
      query: {},
      headers: { 'content-type': 'application/json' },
      body: { status: 'done' },
    },
    {
      method: 'DELETE',
      path: '/v1/projects/caf%C3%A9%20x/',
      query: {},
      headers: { 'If-Match': '"1"' },
    },
    {
      method: 'GET',
      path: ` /v1/projects/${id}/tasks?cursor=x`,
      query: { cursor: 'y', sort: '-updated_at', extra: ['1', '2'] },
      headers: {},
    },
    { method: 'DELETE', path: '/v1/projects/caf%C3%A9%20x', headers: {} },
    { method: 'GET', path: '/v1/tasks/a.b?limit=2', headers: {} },
    { method: 'POST', path: '/v1/tasks', headers: {}, body: '{"title": "a string body"}' },
    { method: 'PUT', path: `/v1/tasks/${id}`, headers: {} },
    { method: 'GET', path: '/v1/nothing', query: { a: '1' }, headers: {} },
  ])(
    'gives the handlers of $method $path the parse openapi-backend gives them',
    async (request) => {
      const seen = await withCompiled.handleRequest(structuredClone(request));
      expect(seen).toEqual(await withStock.handleRequest(structuredClone(request)));
    },
  );

  it('parses a request once, whichever part of openapi-backend asks, without the stock parse', () => {
    const stockParse = jest.spyOn(OpenAPIRouter.prototype, 'parseRequest');
    const request = {
      method: 'GET',
      path: `/v1/projects/${id}/tasks`,
      query: { limit: '5' },
      headers: { authorization: 'Bearer x' },
    };
    const parsed = compiled.parseRequest(request);
    expect(stockParse).not.toHaveBeenCalled();
    stockParse.mockRestore();
    expect(compiled.parseRequest(request, compiled.matchOperation(request, true))).toBe(parsed);
    expect(
      compiled.parseRequest(
        { ...request, query: parsed.query },
        compiled.matchOperation(request, true),
      ),
    ).toBe(parsed);
  });

  it("meets openapi-backend on how it tells a 405 from a 404: by its own router's messages' first three characters", async () => {
    expect(routed(stock, { method: 'PUT', path: `/v1/tasks/${id}`, headers: {} })).toMatch(/^405/);
    expect(routed(stock, { method: 'GET', path: '/v1/nothing', headers: {} })).toMatch(/^404/);
    const answered = async (message: string) => {
      const api = await handled(false);
      jest.spyOn(api.router, 'matchOperation').mockImplementation(() => {
        throw new Error(message);
      });
      return (
        (await api.handleRequest({ method: 'GET', path: '/v1/tasks', headers: {} })) as {
          kind: string;
        }
      ).kind;
    };
    expect([await answered('405-anything'), await answered('404-anything')]).toEqual([
      'methodNotAllowed',
      'notFound',
    ]);
  });

  it('is the router openapi-backend routes and parses with as api.router, and validates with as api.validator.router', async () => {
    const api = await handled(true);
    // One router for each role here, to tell which property each part of openapi-backend reads.
    api.validator.router = new CompiledRouter(api.definition);
    const routes = jest.spyOn(api.router, 'matchOperation');
    const validates = jest.spyOn(api.validator.router, 'parseRequest');
    const answer = (await api.handleRequest({
      method: 'GET',
      path: `/v1/projects/${id}/tasks`,
      query: { limit: 'many' },
      headers: {},
    })) as { kind: string };
    expect(answer.kind).toBe('validationFail');
    expect(routes).toHaveBeenCalled();
    expect(validates).toHaveBeenCalled();
  });

  it('allows, for a 405, the methods the document gives the path', () => {
    expect(
      compiled.allowedMethods({ method: 'PUT', path: `/v1/tasks/${id}/`, headers: {} }).sort(),
    ).toEqual(['DELETE', 'GET', 'PATCH']);
    expect(compiled.allowedMethods({ method: 'PUT', path: '/v1/nothing', headers: {} })).toEqual(
      [],
    );
  });
});
