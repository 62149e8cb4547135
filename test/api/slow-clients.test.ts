/**
 * Slow and idle clients cost the service a bounded time: headers must arrive within
 * HEADERS_TIMEOUT_SECONDS, the whole request within REQUEST_TIMEOUT_SECONDS, an idle keep-alive
 * connection is closed after KEEP_ALIVE_TIMEOUT_SECONDS, and at most MAX_CONNECTIONS are served
 * at once. The timeouts are short here; the service's defaults are 10, 30 and 5 seconds.
 */
import { assertConformsToContract } from '../support/contract';
import { RawConnection } from '../support/raw-http';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let key: string;

beforeAll(async () => {
  api = await startTestService({
    config: { headersTimeoutSeconds: 1, requestTimeoutSeconds: 2, keepAliveTimeoutSeconds: 1 },
  });
  key = await api.createKey('acme');
});
afterAll(() => api.stop());

/** Node checks for late requests once a second at most, so a timeout may be that late. */
const checkingSlack = 1300;

async function expectTimedOut(
  connection: RawConnection,
  timeoutMs: number,
  method: string,
  path: string,
): Promise<void> {
  const response = await connection.response(timeoutMs + checkingSlack + 2000);
  expect(response?.status).toBe(408);
  expect(JSON.parse(response!.text)).toMatchObject({
    type: '/problems/request-timeout',
    request_id: response!.headers.get('x-request-id'),
  });
  await assertConformsToContract(method, path, response!);
  const openMs = await connection.closed();
  expect(openMs).toBeGreaterThanOrEqual(timeoutMs - 50);
  expect(openMs).toBeLessThan(timeoutMs + checkingSlack);
}

it('closes a connection that sends nothing with 408 once the headers timeout passes', async () => {
  await expectTimedOut(await RawConnection.open(api.baseUrl), 1000, 'GET', '/');
});

it('answers headers sent too slowly with 408', async () => {
  const connection = await RawConnection.open(api.baseUrl);
  connection.write('GET /v1/projects HTTP/1.1\r\nHost: x\r\n');
  const drip = setInterval(() => connection.write('X-Slow: 1\r\n'), 300);
  try {
    await expectTimedOut(connection, 1000, 'GET', '/v1/projects');
  } finally {
    clearInterval(drip);
  }
});

it('answers a body sent too slowly with 408 once the request timeout passes, and stores nothing', async () => {
  const connection = await RawConnection.open(api.baseUrl);
  const body = JSON.stringify({ name: 'never finished' });
  connection.write(
    `POST /v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
  );
  let sent = 0;
  const drip = setInterval(() => sent < body.length - 1 && connection.write(body[sent++]), 400);
  try {
    await expectTimedOut(connection, 2000, 'POST', '/v1/projects');
  } finally {
    clearInterval(drip);
  }
  expect(await api.service.knex('projects').count({ n: '*' })).toEqual([{ n: 0 }]);
});

it('closes a keep-alive connection left idle for the keep-alive timeout, and says so', async () => {
  const connection = await RawConnection.open(api.baseUrl);
  connection.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  const response = await connection.response();
  expect(response!.headers.get('keep-alive')).toBe('timeout=1');
  const openMs = await connection.closed(5000);
  // Node closes a second after the timeout it advertises, so a client that honours it closes first.
  expect(openMs).toBeGreaterThanOrEqual(1000);
  expect(openMs).toBeLessThan(2000 + checkingSlack);
});

it('serves at most MAX_CONNECTIONS connections with requests in progress, and takes new ones as those close', async () => {
  const capped = await startTestService({ config: { maxConnections: 3 } });
  const key = await capped.createKey('capped');
  // Each holds a request in progress (a long poll), so none is idle and none is shed for a newcomer.
  const connections = await Promise.all([1, 2, 3].map(() => RawConnection.open(capped.baseUrl)));
  for (const connection of connections)
    connection.write(
      `GET /v1/events?from=latest&wait=20 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`,
    );
  // Time for the service to read their headers: until then they are idle, and may be shed.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  try {
    const refused = await RawConnection.open(capped.baseUrl);
    refused.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await refused.response(2000)).toBeUndefined();

    connections.pop()!.destroy();
    // The server learns of the close a moment later.
    const deadline = Date.now() + 5000;
    let served: number | undefined;
    while (served === undefined && Date.now() < deadline) {
      const another = await RawConnection.open(capped.baseUrl);
      another.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      served = (await another.response(2000))?.status;
    }
    expect(served).toBe(200);
  } finally {
    for (const connection of connections) connection.destroy();
    await capped.stop();
  }
});
