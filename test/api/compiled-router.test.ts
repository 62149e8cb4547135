/**
 * The compiled router must route exactly as openapi-backend's own router does, for every path
 * shape a client can send: the document's paths, near misses, and paths of no operation.
 */
import { OpenAPIBackend, OpenAPIRouter, type Request } from 'openapi-backend';
import { CompiledRouter } from '../../src/http/compiled-router';
import { loadDocument } from '../../src/http/document';

const id = '0196a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const paths = [
  '/v1/projects', '/v1/projects/', `/v1/projects/${id}`, `/v1/projects/${id}/`, `/v1/projects/${id}/tasks`,
  `/v1/projects/${id}/tasks/`, `/v1/projects/${id}/tasks/${id}`, '/v1/projects/tasks', '/v1/projects//tasks',
  '/v1/tasks', `/v1/tasks/${id}`, `/v1/tasks/${id}/status`, '/v1/tasks/a.b', '/v1/tasks/%2F', '/v1', '/', '',
  '/v2/tasks', '/V1/TASKS', '/v1/tasks?limit=5', `/v1/tasks/${id}?x=/`, '//v1/tasks', '/v1/projects/{project_id}',
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

let stock: OpenAPIRouter;
let compiled: CompiledRouter;

beforeAll(async () => {
  const api = new OpenAPIBackend({ definition: loadDocument().definition, quick: true });
  await api.init();
  stock = api.router;
  compiled = new CompiledRouter(api.definition);
});

describe('CompiledRouter routes as openapi-backend does', () => {
  it.each(methods.flatMap((method) => paths.map((path) => [method, path])))('%s %s', (method, path) => {
    const request = { method, path, headers: {} };
    expect(routed(compiled, request)).toBe(routed(stock, request));
  });

  it('routes each of the document\'s operations to itself', () => {
    for (const operation of stock.getOperations()) {
      const request = { method: operation.method, path: operation.path.replace(/\{[^}]+\}/g, id), headers: {} };
      expect(routed(compiled, request)).toBe(operation.operationId);
    }
  });

  it.each<Request>([
    { method: 'GET', path: `/v1/projects/${id}/tasks`, query: { limit: '5', status: ['done', 'pending'] }, headers: { Authorization: 'Bearer x', Cookie: 'a=1' } },
    { method: 'PATCH', path: `/v1/tasks/${id}/`, query: {}, headers: { 'content-type': 'application/json' }, body: { status: 'done' } },
    { method: 'DELETE', path: '/v1/projects/caf%C3%A9%20x', headers: {} },
    { method: 'GET', path: '/v1/tasks/a.b?limit=2', headers: {} },
    { method: 'POST', path: '/v1/tasks', headers: {}, body: '{"title": "a string body"}' },
  ])('parses $method $path, before routing and for its operation, as openapi-backend does', (request) => {
    expect(compiled.parseRequest(request)).toEqual(stock.parseRequest(request));
    const parsed = compiled.parseRequest(request, compiled.matchOperation(request, true));
    expect(parsed).toEqual(stock.parseRequest(request, stock.matchOperation(request, true)));
    expect(compiled.parseRequest(request, compiled.matchOperation(request, true))).toBe(parsed);
  });

  it('allows, for a 405, the methods the document gives the path', () => {
    expect(compiled.allowedMethods({ method: 'PUT', path: `/v1/tasks/${id}/`, headers: {} }).sort()).toEqual(['DELETE', 'GET', 'PATCH']);
    expect(compiled.allowedMethods({ method: 'PUT', path: '/v1/nothing', headers: {} })).toEqual([]);
  });
});
