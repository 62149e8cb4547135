/**
 * A request body is read only once the operation and the key are known: whatever is wrong with
 * the body, a request without a valid key is 401, an unknown path 404, a wrong method 405, a key
 * without the scope 403; and a body nobody reads is not waited for.
 */
import { RawConnection } from '../support/raw-http';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let key: string;

beforeAll(async () => {
  api = await startTestService();
  key = await api.createKey('acme');
});
afterAll(() => api.stop());

const json = { 'Content-Type': 'application/json' };

it.each([
  ['no key', undefined],
  ['an unknown key', `tt_${'A'.repeat(43)}`],
  ['a junk key', 'junk'],
])('answers a malformed body with %s 401, not 400', async (_case, sent) => {
  const res = await api.send('POST', '/v1/projects', {
    key: sent,
    headers: json,
    body: '{"name": ',
  });
  expect([res.status, res.json.type]).toEqual([401, '/problems/unauthenticated']);
});

it('answers a malformed body on an unknown path 404, on a path without the method 405', async () => {
  expect(
    (await api.send('POST', '/v1/tickets', { key, headers: json, body: '{not json' })).status,
  ).toBe(404);
  expect(
    (await api.send('PUT', '/v1/projects', { key, headers: json, body: '{not json' })).status,
  ).toBe(405);
});

it('answers a malformed body from a key without the write scope 403', async () => {
  const reader = await api.createKey('acme', ['read']);
  expect(
    (await api.send('POST', '/v1/projects', { key: reader, headers: json, body: '{not json' }))
      .status,
  ).toBe(403);
});

it('answers an oversized body without a key at once, and closes the connection instead of reading the body', async () => {
  const connection = await RawConnection.open(api.baseUrl);
  connection.write(
    `POST /v1/projects HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n{"name": "`,
  );
  const response = await connection.response(5000);
  expect([response?.status, response?.headers.get('connection')]).toEqual([401, 'close']);
  await connection.closed(5000);
});

it('still reads the body of an authenticated request and answers on the same connection', async () => {
  const connection = await RawConnection.open(api.baseUrl);
  const body = JSON.stringify({ name: 'kept alive' });
  for (let i = 0; i < 2; i++) {
    connection.write(
      `POST /v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect((await connection.response())?.status).toBe(201);
  }
  expect(connection.closedAfterMs).toBeUndefined();
  connection.destroy();
});
