/**
 * The service's address and /v1, opened without a key, point at what to read next: each link the
 * index gives answers, and the index names the document the service serves.
 */
import { loadDocument } from '../../src/http/document';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;

beforeAll(async () => {
  api = await startTestService();
});
afterAll(() => api.stop());

it.each(['/', '/v1', '/v1/'])(
  'GET %s answers, without a key, an index whose every link answers 200',
  async (path) => {
    // Plain fetch: the index is outside the document's operations, which the test client holds answers to.
    const res = await fetch(new URL(path, api.baseUrl));
    expect([res.status, res.headers.get('content-type')]).toEqual([
      200,
      'application/json; charset=utf-8',
    ]);
    const index = (await res.json()) as { links: Record<string, string> };
    const { info } = loadDocument().definition;
    expect(index).toEqual({
      name: info.title,
      version: info.version,
      links: {
        docs: '/docs',
        openapi: '/openapi.yaml',
        openapi_json: '/openapi.json',
        versions: '/versions',
        api: '/v1',
      },
    });
    for (const link of Object.values(index.links)) {
      const followed = await fetch(new URL(link, api.baseUrl), { redirect: 'follow' });
      expect([link, followed.status]).toEqual([link, 200]);
    }
  },
);

it('answers an unknown path under /v1, or a POST to the index, as route-not-found', async () => {
  for (const [method, path] of [
    ['GET', '/v1/nothing-here'],
    ['POST', '/v1'],
    ['POST', '/'],
  ]) {
    const res = await fetch(new URL(path, api.baseUrl), { method });
    expect([method, path, res.status, ((await res.json()) as { type: string }).type]).toEqual([
      method,
      path,
      404,
      '/problems/route-not-found',
    ]);
  }
});
