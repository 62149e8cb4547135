/**
 * A request of a version older than the newest, end to end over HTTP (issue 45): validated
 * against its own version's document, brought up to the newest for the handlers, and its answer
 * brought down and written by its version's schemas, its Idempotency-Key bound to its version.
 * The service has one version so far, so the test gives it a second, older one of its own: the
 * real document as the newest, and `2000-01-01` in which a project's `description` was called
 * `summary` (test/support/older-version.ts).
 */
import { OpenAPIBackend, type Document } from 'openapi-backend';
import { loadDocument } from '../../src/http/document';
import { newestVersion } from '../../src/versions/versions';
import { olderVersion, summaryVersionSet } from '../support/older-version';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let key: string;
const set = summaryVersionSet(loadDocument().definition);
const olderDocument = new OpenAPIBackend({
  definition: set.documents.get(olderVersion) as Document,
  quick: true,
});

beforeAll(async () => {
  await olderDocument.init();
  api = await startTestService({ apiVersions: set });
  key = await api.createKey('older');
});
afterAll(() => api.stop());

async function call(method: string, path: string, version: string | undefined, body?: unknown) {
  const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
  if (version) headers['Api-Version'] = version;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${api.baseUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : undefined };
}

/** The answer is what the older version's document says of that operation and status. */
function expectOlderShape(operationId: string, status: number, body: unknown) {
  const result = olderDocument.validator.validateResponse(body, operationId, status);
  expect([operationId, status, result.errors ?? []]).toEqual([operationId, status, []]);
}

it('answers a request of the older version in its shape, and the same project in the newest in the newest shape', async () => {
  const created = await call('POST', '/v1/projects', olderVersion, {
    name: 'Launch',
    summary: 'Autumn',
  });
  expect([created.status, created.headers.get('api-version')]).toEqual([201, olderVersion]);
  expect(created.json).toMatchObject({ name: 'Launch', summary: 'Autumn' });
  expect(created.json).not.toHaveProperty('description');
  expectOlderShape('createProject', 201, created.json);

  const id = created.json.project_id;
  const newest = await call('GET', `/v1/projects/${id}`, newestVersion);
  expect(newest.json).toMatchObject({ name: 'Launch', description: 'Autumn' });
  expect(newest.json).not.toHaveProperty('summary');

  const changed = await call('PATCH', `/v1/projects/${id}`, olderVersion, { summary: 'Winter' });
  expect([changed.status, changed.json.summary]).toEqual([200, 'Winter']);
  expectOlderShape('updateProject', 200, changed.json);

  const listed = await call('GET', '/v1/projects', olderVersion);
  expect(listed.json.data.map((p: { summary: string }) => p.summary)).toEqual(['Winter']);
  expectOlderShape('listProjects', 200, listed.json);
});

it("refuses what the older version's document does not have, naming the place, and changes nothing", async () => {
  const refused = await call('POST', '/v1/projects', olderVersion, {
    name: 'Not made',
    description: 'newest only',
  });
  expect(refused.status).toBe(400);
  expect(refused.json.type).toBe('/problems/invalid-request');
  expect(refused.json.errors.map((e: { pointer: string }) => e.pointer)).toContain('/description');
  expect(refused.headers.get('api-version')).toBe(olderVersion);
  const listed = await call('GET', '/v1/projects?limit=100', newestVersion);
  expect(listed.json.data.map((p: { name: string }) => p.name)).not.toContain('Not made');
});

it('answers a key pinned to the older version in it, without a header', async () => {
  const pinned = await api.createKey('older-pinned');
  const [row] = await api.service.knex('api_keys').orderBy('created_at', 'desc').limit(1);
  await api.repositories.apiKeys.setApiVersion(row.key_id, olderVersion);
  const res = await fetch(`${api.baseUrl}/v1/projects`, {
    headers: { Authorization: `Bearer ${pinned}` },
  });
  expect(res.headers.get('api-version')).toBe(olderVersion);
});

it('binds an Idempotency-Key to the version: replayed in its own, 422 in another', async () => {
  const send = (version: string, body: unknown) =>
    fetch(`${api.baseUrl}/v1/projects`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${key}`,
        'Content-Type': 'application/json',
        'Api-Version': version,
        'Idempotency-Key': 'one-key',
      },
      body: JSON.stringify(body),
    });
  const first = await send(olderVersion, { name: 'Once', summary: 's' });
  const again = await send(olderVersion, { name: 'Once', summary: 's' });
  expect([first.status, again.status, again.headers.get('idempotent-replayed')]).toEqual([
    201,
    201,
    'true',
  ]);
  expect(((await again.json()) as any).summary).toBe('s');
  const newest = await send(newestVersion, { name: 'Once', description: 's' });
  expect(newest.status).toBe(422);
  expect(((await newest.json()) as any).type).toBe('/problems/idempotency-key-reused');
});
