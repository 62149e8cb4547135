/**
 * The kit's webhook receiver in one call, `webhookHandler`, getting real deliveries from the
 * service: on node:http and on Express (before a JSON parser with `path`, after express.raw(),
 * and after express.json(), where the raw body is gone and it says so); each delivery's answer as
 * the endpoint's delivery log records it (204, 401 for another endpoint's signature, 413 over the
 * limit, 500 when onEvent fails, then 204 on the retry); and what it answers a sender by hand.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createClient, type TaskTrackerClient, type TypedEvent } from '@task-tracker/client';
import {
  signTestWebhook,
  webhookHandler,
  type WebhookHandler,
} from '@task-tracker/client/webhooks';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let client: TaskTrackerClient;

beforeAll(async () => {
  api = await startTestService({
    config: { webhookAllowPrivateTargets: true, webhookRetryScheduleMs: [200, 60_000] },
  });
  client = createClient({ baseUrl: api.baseUrl, apiKey: await api.createKey('handler') });
});
afterAll(() => api.stop());

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A server on a free loopback port; its origin. */
async function listen(listener: http.RequestListener): Promise<string> {
  const server = http.createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * A server whose handler is made once an endpoint is registered at its URL: the endpoint's
 * secret exists only then. `make(secret)` makes the handler.
 */
async function receiverAt(path: string, make: (secret: string) => WebhookHandler) {
  let handler: WebhookHandler | undefined;
  const origin = await listen((req, res) => handler!(req, res));
  const endpoint = await client.webhookEndpoints.create({ url: `${origin}${path}` });
  handler = make(endpoint.secret);
  return { origin, endpoint };
}

/** The attempts the service made to the endpoint, oldest first, once `count` have ended. */
async function attempts(endpointId: string, count: number) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const all = (await client.webhookEndpoints.deliveries(endpointId).toArray({ max: 50 }))
      .filter((d) => d.status !== 'pending')
      .reverse();
    if (all.length >= count)
      return all.slice(0, count).map((d) => `${d.event_type} ${d.response_status}`);
    if (Date.now() > deadline) throw new Error(`${all.length} of ${count} attempts ended`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

it("on node:http, hands each verified delivery to onEvent and answers 204; another endpoint's signature is 401", async () => {
  const handled: TypedEvent[] = [];
  const { endpoint } = await receiverAt('/hook', (secret) =>
    webhookHandler({ secret, onEvent: (event) => void handled.push(event) }),
  );
  // Signed with this endpoint's own secret, its deliveries to the same URL fail verification.
  const other = await client.webhookEndpoints.create({ url: endpoint.url });
  const project = await client.projects.create({ name: 'handled' });
  expect(await attempts(endpoint.webhook_endpoint_id, 1)).toEqual(['project.created 204']);
  expect(await attempts(other.webhook_endpoint_id, 1)).toEqual(['project.created 401']);
  expect(handled.map((event) => [event.type, event.data.object])).toEqual([
    ['project.created', project],
  ]);
  await client.webhookEndpoints.delete(endpoint.webhook_endpoint_id);
  await client.webhookEndpoints.delete(other.webhook_endpoint_id);
});

it('answers 500 while onEvent fails, so the service delivers again, and 204 once it is handled', async () => {
  let failures = 0;
  const { endpoint } = await receiverAt('/flaky', (secret) =>
    webhookHandler({
      secret,
      onEvent: async () => {
        if (failures++ === 0) throw new Error('the database is down');
      },
      onError: () => {},
    }),
  );
  await client.projects.create({ name: 'flaky' });
  expect(await attempts(endpoint.webhook_endpoint_id, 2)).toEqual([
    'project.created 500',
    'project.created 204',
  ]);
  await client.webhookEndpoints.delete(endpoint.webhook_endpoint_id);
});

it('refuses a delivery over maxBodyBytes with 413', async () => {
  const handled: string[] = [];
  const { endpoint } = await receiverAt('/small', (secret) =>
    webhookHandler({ secret, maxBodyBytes: 64, onEvent: (e) => void handled.push(e.type) }),
  );
  await client.projects.create({ name: 'a project whose event is over 64 bytes' });
  expect(await attempts(endpoint.webhook_endpoint_id, 1)).toEqual(['project.created 413']);
  expect(handled).toEqual([]);
  await client.webhookEndpoints.delete(endpoint.webhook_endpoint_id);
});

it('on Express: before a JSON parser with `path`, after express.raw(), and says so after express.json()', async () => {
  const handled: string[] = [];
  const errors: string[] = [];
  let secrets: Record<string, string> = {};
  const app = express();
  // Made per request: the secrets exist once the endpoints are registered, below.
  const handler =
    (name: string, options: { path?: string } = {}): express.RequestHandler =>
    (req, res, next) =>
      webhookHandler({
        ...options,
        secret: secrets[name],
        onEvent: (event) => void handled.push(`${name} ${event.type}`),
        onError: (error) => void errors.push(`${name}: ${(error as Error).message}`),
      })(req, res, next);
  app.use(handler('first', { path: '/first' }));
  app.post('/raw', express.raw({ type: 'application/json' }), handler('raw'));
  app.use(express.json());
  app.post('/parsed', handler('parsed'));
  app.get('/other', (_req, res) => void res.send('not a webhook'));
  const origin = await listen(app);
  const names = ['first', 'parsed', 'raw'];
  const endpoints = await Promise.all(
    names.map((name) => client.webhookEndpoints.create({ url: `${origin}/${name}` })),
  );
  secrets = Object.fromEntries(names.map((name, i) => [name, endpoints[i].secret]));
  await client.projects.create({ name: 'on express' });
  const answered = await Promise.all(
    endpoints.map((endpoint) => attempts(endpoint.webhook_endpoint_id, 1)),
  );
  expect(answered).toEqual([
    ['project.created 204'],
    ['project.created 500'],
    ['project.created 204'],
  ]);
  expect(handled.sort()).toEqual(['first project.created', 'raw project.created']);
  // Once for each attempt (the service retries the 500).
  expect([...new Set(errors)]).toEqual([
    expect.stringMatching(/^parsed: .*before any JSON body parser, or after express\.raw/),
  ]);
  // Requests to other paths go on to the next handler.
  expect(await (await fetch(`${origin}/other`)).text()).toBe('not a webhook');
  await Promise.all(
    endpoints.map((endpoint) => client.webhookEndpoints.delete(endpoint.webhook_endpoint_id)),
  );
});

describe('answering a sender by hand', () => {
  const secret = 'whsec_' + Buffer.alloc(32, 9).toString('base64');
  const event = {
    event_id: '0193a000-0000-7000-8000-000000000001',
    sequence: 1,
    type: 'project.created',
    created_at: '2026-11-26T00:00:00.000Z',
    project_id: 'p',
    request_id: 'r',
    data: { object: {} },
  } as unknown as TypedEvent;
  let origin: string;
  const handled: string[] = [];
  const refused: string[] = [];
  beforeEach(async () => {
    origin = await listen(
      webhookHandler({
        secret,
        path: '/hook',
        onEvent: (e) => void handled.push(e.event_id),
        onRefusal: ({ status, reason }) => void refused.push(`${status} ${reason}`),
      }),
    );
  });
  const post = (body: string | Uint8Array, headers: Record<string, string>, path = '/hook') =>
    fetch(`${origin}${path}`, { method: 'POST', body, headers }).then(async (response) => [
      response.status,
      await response.text(),
    ]);

  it('verifies, and says why it refuses, to the sender and to onRefusal: 400 malformed, 401 signature or timestamp, 404, 405', async () => {
    const signed = signTestWebhook(event, secret);
    expect(await post(signed.body, signed.headers)).toEqual([204, '']);
    expect(handled).toEqual([event.event_id]);
    expect(await post(signed.body.replace('"p"', '"q"'), signed.headers)).toEqual([
      401,
      'signature: No matching signature found\n',
    ]);
    const stale = signTestWebhook(event, secret, { timestamp: new Date(Date.now() - 600_000) });
    expect(await post(stale.body, stale.headers)).toEqual([
      401,
      'timestamp: Message timestamp too old\n',
    ]);
    const { 'webhook-id': _, ...withoutId } = signed.headers;
    expect(await post(signed.body, withoutId)).toEqual([
      400,
      'format: The webhook-id header is missing.\n',
    ]);
    expect(await post(Buffer.from([0x7b, 0xff, 0x7d]), signed.headers)).toEqual([
      400,
      'format: The body is not UTF-8.\n',
    ]);
    expect(await post(signed.body, signed.headers, '/elsewhere')).toEqual([
      404,
      'deliveries are taken at /hook\n',
    ]);
    const get = await fetch(`${origin}/hook`);
    expect([get.status, get.headers.get('allow'), await get.text()]).toEqual([
      405,
      'POST',
      'a webhook delivery is a POST\n',
    ]);
    expect(handled).toHaveLength(1);
    // Each refusal told to onRefusal, with what it answered.
    expect(refused.map((r) => r.split(':')[0])).toEqual([
      '401 signature',
      '401 timestamp',
      '400 format',
      '400 format',
      '404 deliveries are taken at /hook',
      '405 a webhook delivery is a POST',
    ]);
  });

  it('counts a body sent in chunks, without a Content-Length, against the limit: 413', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const request = http.request(`${origin}/hook`, { method: 'POST' }, (response) => {
        response.resume();
        resolve(response.statusCode!);
      });
      request.on('error', reject);
      for (let i = 0; i < 64; i++) request.write(Buffer.alloc(32 * 1024, 'x'));
      request.end();
    });
    expect(status).toBe(413);
  });

  it('refuses to be made without a usable secret', () => {
    for (const bad of ['', 'null', [], ['whsec_' + Buffer.alloc(32).toString('base64'), '']])
      expect(() => webhookHandler({ secret: bad, onEvent: () => {} })).toThrow(
        /needs the endpoint's secret, whsec_/,
      );
  });
});
