/**
 * Requests Node's HTTP parser refuses never reach Express; they still get a problem document
 * with an X-Request-Id, as the document promises for every response, and the connection closes.
 */
import { assertConformsToContract } from '../support/contract';
import { RawConnection, rawRequest, type SocketResponse } from '../support/raw-http';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let key: string;

beforeAll(async () => {
  api = await startTestService();
  key = await api.createKey('acme');
});
afterAll(() => api.stop());

async function expectProblem(
  method: string,
  path: string,
  response: SocketResponse,
  status: number,
  type: string,
): Promise<void> {
  expect([response.status, response.headers.get('content-type')]).toEqual([
    status,
    'application/problem+json; charset=utf-8',
  ]);
  const problem = JSON.parse(response.text);
  expect(problem).toMatchObject({ type, status });
  expect(problem.request_id).toBe(response.headers.get('x-request-id'));
  expect(response.headers.get('connection')).toBe('close');
  await assertConformsToContract(method, path, response);
}

it.each([
  [
    'a control character in a header value',
    `GET /v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer KEY\r\nIdempotency-Key: a\u0001b\r\n\r\n`,
  ],
  ['an invalid method', 'G@T /v1/projects HTTP/1.1\r\nHost: x\r\n\r\n'],
  ['a space in a header name', 'GET /v1/projects HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n'],
  [
    'both Content-Length and Transfer-Encoding',
    'POST /v1/projects HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  ],
])('answers %s with 400 malformed-request', async (_case, request) => {
  const response = await rawRequest(api.baseUrl, request.replace('KEY', key));
  await expectProblem('GET', '/v1/projects', response, 400, '/problems/malformed-request');
  expect(await response.connection.closed()).toBeGreaterThanOrEqual(0);
});

it('answers a chunked body that breaks its framing, after the request has started, with 400', async () => {
  const connection = await RawConnection.open(api.baseUrl);
  connection.write(
    `POST /v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
  );
  await new Promise((resolve) => setTimeout(resolve, 100)); // the handler is now waiting for the body
  connection.write('zz\r\n{}\r\n0\r\n\r\n');
  const response = await connection.response();
  await expectProblem('POST', '/v1/projects', response!, 400, '/problems/malformed-request');
  await connection.closed();
  expect(await api.service.knex('projects').count({ n: '*' })).toEqual([{ n: 0 }]);
});

it('answers headers over 16 KiB with 431 headers-too-large', async () => {
  const response = await rawRequest(
    api.baseUrl,
    `GET /v1/projects HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`,
  );
  await expectProblem('GET', '/v1/projects', response, 431, '/problems/headers-too-large');
});

it('answers a malformed request on a connection that has already served one (Node alone would not)', async () => {
  const connection = await RawConnection.open(api.baseUrl);
  connection.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  expect((await connection.response())!.status).toBe(200);
  connection.write('GET /v1/projects HTTP/1.1\r\nHost: x\r\nX-Bad: \u0007\r\n\r\n');
  await expectProblem(
    'GET',
    '/v1/projects',
    (await connection.response())!,
    400,
    '/problems/malformed-request',
  );
  await connection.closed();
});
