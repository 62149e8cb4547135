/**
 * The delivery client against a real HTTP receiver on loopback: what an attempt reports of each
 * kind of answer, the timeout however the answer stalls, the connection used again (and not after
 * an answer too long to read), and attempts called off when the service stops.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createResolver } from '../../src/webhooks/dns-lookups';
import { createWebhookClient, type WebhookClient } from '../../src/webhooks/http-client';
import { freePort } from '../support/free-port';

/** The attempts' timeout in the test of the timeout; the other tests' is far longer, so that only what they try ends their attempts, however loaded the machine. */
const timeoutMs = 1500;
let server: http.Server;
let base: string;
let client: WebhookClient;
/** The connection each path's last request came over, and how many requests each had. */
const socketOf = new Map<string, Socket>();
const requestsTo = new Map<string, number>();

beforeAll(async () => {
  server = http.createServer((request, response) => {
    socketOf.set(request.url!, request.socket);
    requestsTo.set(request.url!, (requestsTo.get(request.url!) ?? 0) + 1);
    request.resume();
    request.on('end', () => {
      switch (request.url) {
        case '/ok':
          return response.writeHead(204).end();
        case '/busy':
          return response.writeHead(503, { 'retry-after': '7' }).end('busy');
        case '/early':
          response.writeEarlyHints({ link: '</style.css>; rel=preload' });
          return response.writeHead(202).end();
        case '/long':
          // 1 MiB, far more than the client reads of an answer.
          return response.writeHead(200).end(Buffer.alloc(1024 * 1024, 'x'));
        case '/stalls':
          response.writeHead(200, { 'content-length': '100' });
          return response.write('part of the body, never the rest');
        case '/hints-only':
          return response.writeEarlyHints({ link: '</style.css>; rel=preload' });
        case '/silent':
          return;
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  client = clientWith(30_000);
});

const clientWith = (attemptTimeoutMs: number) =>
  createWebhookClient({
    timeoutMs: attemptTimeoutMs,
    allowPrivateTargets: true,
    resolver: createResolver({ servers: ['127.0.0.1:1'], timeoutMs: 1000, answerLocalhost: true }),
  });

afterAll(async () => {
  await client.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const post = (path: string) =>
  client.post(`${base}${path}`, { 'content-type': 'application/json' }, '{"a":1}');

/** undici lets a connection rest one turn of the event loop before its next request. */
const aTurn = () => new Promise((resolve) => setImmediate(resolve));

it('reports the status and Retry-After, and sends the next attempt over the same connection', async () => {
  expect(await post('/ok').result).toMatchObject({ status: 204 });
  await aTurn();
  const busy = await post('/busy').result;
  expect(busy).toMatchObject({ status: 503, retryAfterMs: 7000 });
  expect(busy.error).toBeUndefined();
  expect(socketOf.get('/busy')).toBe(socketOf.get('/ok'));
});

it('takes the final answer after an informational one', async () => {
  expect(await post('/early').result).toMatchObject({ status: 202 });
});

it('gives the status of an answer too long to read, and closes its connection', async () => {
  const attempt = post('/long');
  expect(await attempt.result).toMatchObject({ status: 200 });
  await attempt.ended;
  // The receiver keeps a connection a minute: the client closed this one, at once.
  const used = socketOf.get('/long')!;
  const closed = await Promise.race([
    new Promise((resolve) =>
      used.closed ? resolve(true) : used.once('close', () => resolve(true)),
    ),
    new Promise((resolve) => setTimeout(() => resolve(false), 1500)),
  ]);
  expect(closed).toBe(true);
  expect(await post('/ok').result).toMatchObject({ status: 204 });
});

it('cuts off an attempt at the timeout, whether no answer comes or its body never ends', async () => {
  const short = clientWith(timeoutMs);
  const [silent, hints, stalls] = await Promise.all(
    ['/silent', '/hints-only', '/stalls'].map(
      (path) => short.post(`${base}${path}`, {}, '{}').result,
    ),
  );
  await short.close();
  for (const unanswered of [silent, hints]) {
    expect(unanswered).toMatchObject({ error: 'timeout' });
    expect(unanswered.status).toBeUndefined();
    expect(unanswered.durationMs).toBeGreaterThanOrEqual(timeoutMs - 5);
  }
  // The status came before the body stalled: it is the answer.
  expect(stalls).toMatchObject({ status: 200 });
  expect(stalls.durationMs).toBeGreaterThanOrEqual(timeoutMs - 5);
});

it('calls off the attempts in flight: they end as abandoned, saying nothing of the receiver', async () => {
  const before = requestsTo.get('/silent') ?? 0;
  const attempts = [post('/silent'), post('/silent')];
  while ((requestsTo.get('/silent') ?? 0) < before + 2)
    await new Promise((resolve) => setTimeout(resolve, 10));
  client.callOff();
  const results = await Promise.all(attempts.map((attempt) => attempt.result));
  for (const result of results) {
    expect(result).toMatchObject({ abandoned: true });
    expect(result.status).toBeUndefined();
  }
  await Promise.all(attempts.map((attempt) => attempt.ended));
});

it('says the connection was refused when nothing listens', async () => {
  const port = await freePort();
  const result = await client.post(`http://127.0.0.1:${port}/`, {}, '{}').result;
  expect(result).toMatchObject({ error: 'connection refused' });
});
