/**
 * Webhooks over HTTP, with a local receiver: endpoints and their tenancy; every delivery signed
 * so that the standardwebhooks library verifies it, with the Event exactly as the feed shows
 * it; the type filter; retries on the schedule, Retry-After and the log of attempts; 410, a
 * receiver that hangs, a redirect; rotation; redelivery; disabling and deleting; an endpoint
 * failing for 5 days; connections kept alive.
 */
import { newestVersion } from '../../src/versions/versions';
import { Webhook } from 'standardwebhooks';
import type { components } from '../../generated/api';
import { toDbTimestamp } from '../../src/db/timestamps';
import {
  startReceiver,
  type ReceivedRequest,
  type WebhookReceiver,
} from '../support/webhook-receiver';
import { startTestService, type TestService } from '../support/test-service';

type Event = components['schemas']['Event'];
type WebhookDelivery = components['schemas']['WebhookDelivery'];

const schedule = [400, 800];
let api: TestService;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [api, receiver] = await Promise.all([
    startTestService({
      config: {
        webhookAllowPrivateTargets: true,
        webhookTimeoutSeconds: 1,
        webhookRetryScheduleMs: schedule,
      },
    }),
    startReceiver(),
  ]);
});
afterAll(async () => {
  await api.stop();
  await receiver.stop();
});

const json = { 'Content-Type': 'application/json' };
let tenants = 0;

/** A new tenant with a key, and an endpoint of it at `path` on the receiver. */
async function registered(path: string, extra: Record<string, unknown> = {}, tenantKey?: string) {
  const key = tenantKey ?? (await api.createKey(`webhooks-${++tenants}`));
  const created = await api.send('POST', '/v1/webhook-endpoints', {
    key,
    headers: json,
    body: JSON.stringify({ url: receiver.origin + path, ...extra }),
  });
  expect(created.status).toBe(201);
  return { key, endpoint: created.json as components['schemas']['WebhookEndpointWithSecret'] };
}

const createProject = async (key: string, name = 'p') => {
  const response = await api.send('POST', '/v1/projects', {
    key,
    headers: json,
    body: JSON.stringify({ name }),
  });
  expect(response.status).toBe(201);
  return response.json as components['schemas']['Project'];
};

/** Every event of the key's tenant in the feed, once it holds at least `count` (numbering follows the commit). */
async function feed(key: string, count = 1): Promise<Event[]> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const events: Event[] = (await api.send('GET', '/v1/events?limit=200', { key })).json.data;
    if (events.length >= count || Date.now() > deadline) return events;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function deliveryLog(key: string, endpointId: string): Promise<WebhookDelivery[]> {
  const response = await api.send(
    'GET',
    `/v1/webhook-endpoints/${endpointId}/deliveries?limit=200`,
    { key },
  );
  expect(response.status).toBe(200);
  return response.json.data;
}

/** Polls the log until `done` holds of it. */
async function logUntil(
  key: string,
  endpointId: string,
  done: (log: WebhookDelivery[]) => boolean,
  timeoutMs = 10_000,
): Promise<WebhookDelivery[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const log = await deliveryLog(key, endpointId);
    if (done(log) || Date.now() > deadline) return log;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const headersOf = (request: ReceivedRequest) => request.headers as Record<string, string>;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('endpoints', () => {
  it('registers, lists, reads, changes and deletes an endpoint; the secret is shown on registration only', async () => {
    const key = await api.createKey('webhooks-crud');
    const client = api.client(key);
    const created = await client.POST('/v1/webhook-endpoints', {
      body: { url: `${receiver.origin}/crud`, event_types: ['task.created'], description: 'board' },
    });
    expect(created.response.status).toBe(201);
    const endpoint = created.data!;
    expect(endpoint).toEqual({
      webhook_endpoint_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      url: `${receiver.origin}/crud`,
      event_types: ['task.created'],
      // A new tenant's endpoint subscribes to every task event its types select.
      filter: null,
      fields: null,
      description: 'board',
      enabled: true,
      disabled_reason: null,
      created_at: expect.any(String),
      updated_at: endpoint.created_at,
      // The version of the request that made it: a new tenant's, the newest.
      api_version: newestVersion,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(created.response.headers.get('location')).toBe(
      `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}`,
    );
    expect(Buffer.from(endpoint.secret.slice(6), 'base64')).toHaveLength(32);
    const { secret: _secret, ...shown } = endpoint;
    const path = { params: { path: { webhook_endpoint_id: endpoint.webhook_endpoint_id } } };
    expect((await client.GET('/v1/webhook-endpoints/{webhook_endpoint_id}', path)).data).toEqual(
      shown,
    );
    expect((await client.GET('/v1/webhook-endpoints')).data).toEqual({
      data: [shown],
      next_cursor: null,
    });

    const changed = await client.PATCH('/v1/webhook-endpoints/{webhook_endpoint_id}', {
      ...path,
      body: { event_types: null, description: 'all', url: `${receiver.origin}/crud2` },
    });
    expect(changed.response.status).toBe(200);
    expect(changed.data).toMatchObject({
      event_types: null,
      description: 'all',
      url: `${receiver.origin}/crud2`,
      enabled: true,
    });
    const disabled = await api.send(
      'PATCH',
      `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}`,
      {
        key,
        headers: { 'Content-Type': 'application/merge-patch+json' },
        body: '{"enabled": false}',
      },
    );
    expect(disabled.json).toMatchObject({ enabled: false, disabled_reason: 'by_client' });
    // Disabled already: the reason stays the one it had.
    expect(
      (
        await client.PATCH('/v1/webhook-endpoints/{webhook_endpoint_id}', {
          ...path,
          body: { enabled: false, description: 'off' },
        })
      ).data,
    ).toMatchObject({ enabled: false, disabled_reason: 'by_client' });
    expect(
      (
        await client.PATCH('/v1/webhook-endpoints/{webhook_endpoint_id}', {
          ...path,
          body: { enabled: true },
        })
      ).data,
    ).toMatchObject({ enabled: true, disabled_reason: null });

    const rotated = await client.POST(
      '/v1/webhook-endpoints/{webhook_endpoint_id}/rotate-secret',
      path,
    );
    expect(rotated.data).toEqual({ secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/) });
    expect(
      (await client.GET('/v1/webhook-endpoints/{webhook_endpoint_id}/deliveries', path)).data,
    ).toEqual({ data: [], next_cursor: null });

    expect(
      (await client.DELETE('/v1/webhook-endpoints/{webhook_endpoint_id}', path)).response.status,
    ).toBe(204);
    expect(
      (await api.send('DELETE', `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}`, { key }))
        .status,
    ).toBe(404);
    expect(
      (await api.send('GET', `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}`, { key }))
        .status,
    ).toBe(404);
  });

  it('pages through endpoints and through the delivery log, newest first', async () => {
    const { key, endpoint } = await registered('/paged');
    const client = api.client(key);
    for (let i = 0; i < 2; i++)
      await client.POST('/v1/webhook-endpoints', {
        body: { url: `${receiver.origin}/paged-${i}` },
      });
    const first = await client.GET('/v1/webhook-endpoints', { params: { query: { limit: 2 } } });
    const second = await client.GET('/v1/webhook-endpoints', {
      params: { query: { limit: 2, cursor: first.data!.next_cursor! } },
    });
    expect([...first.data!.data, ...second.data!.data].map((e) => e.url)).toEqual([
      `${receiver.origin}/paged`,
      `${receiver.origin}/paged-0`,
      `${receiver.origin}/paged-1`,
    ]);
    expect(second.data!.next_cursor).toBeNull();

    for (let i = 0; i < 3; i++) await createProject(key, `p${i}`);
    await receiver.waitFor(3, { path: '/paged' });
    await logUntil(
      key,
      endpoint.webhook_endpoint_id,
      (l) => l.length === 3 && l.every((d) => d.status === 'succeeded'),
    );
    const path = { webhook_endpoint_id: endpoint.webhook_endpoint_id };
    const page1 = await client.GET('/v1/webhook-endpoints/{webhook_endpoint_id}/deliveries', {
      params: { path, query: { limit: 2 } },
    });
    const page2 = await client.GET('/v1/webhook-endpoints/{webhook_endpoint_id}/deliveries', {
      params: { path, query: { limit: 2, cursor: page1.data!.next_cursor! } },
    });
    const log = [...page1.data!.data, ...page2.data!.data];
    expect(page2.data!.next_cursor).toBeNull();
    const events = await feed(key, 3);
    expect(log.map((d) => d.event_id)).toEqual(events.map((e) => e.event_id).reverse());
  });

  it('keeps endpoints to their tenant and the write operations to keys with write', async () => {
    const { endpoint } = await registered('/tenancy');
    const other = await api.createKey('webhooks-other');
    const path = `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}`;
    for (const [method, suffix, body] of [
      ['GET', '', undefined],
      ['PATCH', '', '{"enabled": false}'],
      ['DELETE', '', undefined],
      ['POST', '/rotate-secret', undefined],
      ['GET', '/deliveries', undefined],
      ['POST', '/deliveries', JSON.stringify({ event_id: endpoint.webhook_endpoint_id })],
    ] as const) {
      const response = await api.send(method, path + suffix, { key: other, headers: json, body });
      expect([method, suffix, response.status, response.json.type]).toEqual([
        method,
        suffix,
        404,
        '/problems/not-found',
      ]);
    }
    expect((await api.send('GET', '/v1/webhook-endpoints', { key: other })).json.data).toEqual([]);
    const reader = await api.createKey('webhooks-other', ['read']);
    expect(
      (
        await api.send('POST', '/v1/webhook-endpoints', {
          key: reader,
          headers: json,
          body: JSON.stringify({ url: 'https://hooks.example.com/' }),
        })
      ).status,
    ).toBe(403);
    expect((await api.send('GET', '/v1/webhook-endpoints', { key: reader })).status).toBe(200);
  });

  it('refuses what is not an absolute http(s) URL, unknown fields and types, and an empty change', async () => {
    const key = await api.createKey('webhooks-invalid');
    const post = (body: unknown) =>
      api.send('POST', '/v1/webhook-endpoints', { key, headers: json, body: JSON.stringify(body) });
    for (const body of [
      {},
      { url: 'ftp://example.com/x' },
      { url: '/relative' },
      { url: 'https://x.example/', event_types: [] },
      { url: 'https://x.example/', event_types: ['task.moved'] },
      { url: 'https://x.example/', event_types: ['task.created', 'task.created'] },
      { url: 'https://x.example/', description: 'd'.repeat(501) },
      { url: 'https://x.example/', secret: 'whsec_x' },
    ]) {
      const response = await post(body);
      expect([body, response.status, response.json.type]).toEqual([
        body,
        400,
        '/problems/invalid-request',
      ]);
    }
    const { endpoint } = await registered('/invalid');
    expect(
      (
        await api.send('PATCH', `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}`, {
          key,
          headers: json,
          body: '{}',
        })
      ).status,
    ).toBe(400);
  });
});

describe('delivery', () => {
  it('delivers each event as the feed shows it, signed so that standardwebhooks verifies it, once', async () => {
    const { key, endpoint } = await registered('/signed');
    const project = await createProject(key, 'Signed');
    await api.send('PATCH', `/v1/projects/${project.project_id}`, {
      key,
      headers: json,
      body: '{"name": "Signed 2"}',
    });
    const [first, second] = await receiver.waitFor(2, { path: '/signed' });
    const events = await feed(key, 2);
    expect(events.map((e) => e.type)).toEqual(['project.created', 'project.updated']);
    const verifier = new Webhook(endpoint.secret);
    for (const [request, event] of [
      [first, events[0]],
      [second, events[1]],
    ] as const) {
      expect(request.method).toBe('POST');
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['webhook-id']).toBe(event.event_id);
      expect(
        Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000),
      ).toBeLessThan(10);
      expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      expect(verifier.verify(request.body, headersOf(request))).toEqual(event);
      expect(request.body).toBe(JSON.stringify(event));
    }
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(
        first.body,
        headersOf(first),
      ),
    ).toThrow();
    const log = await logUntil(key, endpoint.webhook_endpoint_id, (l) =>
      l.every((d) => d.status === 'succeeded'),
    );
    expect(
      log.map(
        ({ event_id, event_type, attempt, status, response_status, error, next_attempt_at }) => ({
          event_id,
          event_type,
          attempt,
          status,
          response_status,
          error,
          next_attempt_at,
        }),
      ),
    ).toEqual(
      [events[1], events[0]].map((e) => ({
        event_id: e.event_id,
        event_type: e.type,
        attempt: 1,
        status: 'succeeded',
        response_status: 204,
        error: null,
        next_attempt_at: null,
      })),
    );
    for (const attempt of log) expect(attempt.duration_ms).toEqual(expect.any(Number));
    await sleep(500);
    expect(receiver.received.filter((r) => r.path === '/signed')).toHaveLength(2);
  });

  it('sends only the types an endpoint selects, and every type to one that selects none', async () => {
    const key = await api.createKey('webhooks-types');
    const post = (url: string, types?: string[]) =>
      api.send('POST', '/v1/webhook-endpoints', {
        key,
        headers: json,
        body: JSON.stringify({ url: receiver.origin + url, ...(types && { event_types: types }) }),
      });
    await post('/types-tasks', ['task.created', 'task.deleted']);
    await post('/types-all');
    const project = await createProject(key);
    const task = (
      await api.send('POST', '/v1/tasks', {
        key,
        headers: json,
        body: JSON.stringify({ project_id: project.project_id, title: 't' }),
      })
    ).json;
    await api.send('PATCH', `/v1/tasks/${task.task_id}`, {
      key,
      headers: json,
      body: '{"status": "done"}',
    });
    await api.send('DELETE', `/v1/tasks/${task.task_id}`, { key });
    const all = await receiver.waitFor(4, { path: '/types-all' });
    await receiver.waitFor(2, { path: '/types-tasks' });
    const typeOf = (r: ReceivedRequest) => JSON.parse(r.body).type;
    expect(all.map(typeOf).sort()).toEqual([
      'project.created',
      'task.created',
      'task.deleted',
      'task.updated',
    ]);
    await sleep(300);
    expect(
      receiver.received
        .filter((r) => r.path === '/types-tasks')
        .map(typeOf)
        .sort(),
    ).toEqual(['task.created', 'task.deleted']);
  });

  it('retries a failed attempt on the schedule with the same webhook-id, and logs every attempt, newest first', async () => {
    receiver.respond((request) =>
      request.path === '/retried' &&
      receiver.received.filter((r) => r.path === '/retried').length < 3
        ? { status: 500 }
        : { status: 204 },
    );
    try {
      const { key, endpoint } = await registered('/retried');
      await createProject(key);
      const attempts = await receiver.waitFor(3, { path: '/retried' });
      expect(new Set(attempts.map((a) => a.headers['webhook-id'])).size).toBe(1);
      // Each wait is the schedule's, give or take 20%, plus up to a poll (200 ms) to find it due.
      for (const [i, wait] of schedule.entries()) {
        const waited = attempts[i + 1].at - attempts[i].at;
        expect([i, waited]).toEqual([i, expect.any(Number)]);
        expect(waited).toBeGreaterThanOrEqual(wait * 0.8 - 20);
        expect(waited).toBeLessThan(wait * 1.2 + 600);
      }
      const log = await logUntil(
        key,
        endpoint.webhook_endpoint_id,
        (l) => l[0]?.status === 'succeeded',
      );
      expect(
        log.map(({ attempt, status, response_status }) => ({ attempt, status, response_status })),
      ).toEqual([
        { attempt: 3, status: 'succeeded', response_status: 204 },
        { attempt: 2, status: 'failed', response_status: 500 },
        { attempt: 1, status: 'failed', response_status: 500 },
      ]);
      expect(log[2].next_attempt_at! >= log[2].created_at).toBe(true);
      expect(log[0].next_attempt_at).toBeNull();
      expect(new Set(log.map((d) => d.event_id)).size).toBe(1);
    } finally {
      receiver.respond(() => ({ status: 204 }));
    }
  });

  it('gives up once the schedule is spent, and never retries sooner than Retry-After', async () => {
    receiver.respond((request) =>
      request.path === '/retry-after'
        ? { status: 503, headers: { 'Retry-After': '1' } }
        : { status: 204 },
    );
    try {
      const { key, endpoint } = await registered('/retry-after');
      await createProject(key);
      const attempts = await receiver.waitFor(3, { path: '/retry-after', timeoutMs: 6000 });
      expect(attempts[1].at - attempts[0].at).toBeGreaterThanOrEqual(990);
      expect(attempts[2].at - attempts[1].at).toBeGreaterThanOrEqual(990);
      const log = await logUntil(
        key,
        endpoint.webhook_endpoint_id,
        (l) => l.length === 3 && l[0].status === 'failed',
      );
      expect(
        log.map(({ attempt, status, response_status, next_attempt_at }) => ({
          attempt,
          status,
          response_status,
          last: next_attempt_at === null,
        })),
      ).toEqual([
        { attempt: 3, status: 'failed', response_status: 503, last: true },
        { attempt: 2, status: 'failed', response_status: 503, last: false },
        { attempt: 1, status: 'failed', response_status: 503, last: false },
      ]);
      await sleep(800);
      expect(receiver.received.filter((r) => r.path === '/retry-after')).toHaveLength(3);
    } finally {
      receiver.respond(() => ({ status: 204 }));
    }
  });

  it('disables an endpoint that answers 410 at once; re-enabled, it gets what is still pending', async () => {
    receiver.respond((request) => (request.path === '/gone' ? { status: 410 } : { status: 204 }));
    const { key, endpoint } = await registered('/gone');
    const path = `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}`;
    const etagBefore = (await api.send('GET', path, { key })).headers.get('etag');
    try {
      await createProject(key, 'first');
      await receiver.waitFor(1, { path: '/gone' });
      const deadline = Date.now() + 5000;
      while ((await api.send('GET', path, { key })).json.enabled && Date.now() < deadline)
        await sleep(50);
      const disabled = await api.send('GET', path, { key });
      expect(disabled.json).toMatchObject({ enabled: false, disabled_reason: 'gone' });
      // The service's disabling is a change the tenant sees: the ETag changes.
      expect(disabled.headers.get('etag')).not.toBe(etagBefore);
      await createProject(key, 'while disabled');
      await sleep(1500);
      expect(receiver.received.filter((r) => r.path === '/gone')).toHaveLength(1);
      expect(
        (await deliveryLog(key, endpoint.webhook_endpoint_id)).map((d) => [
          d.attempt,
          d.status,
          d.response_status,
        ]),
      ).toEqual([
        [2, 'pending', null],
        [1, 'failed', 410],
      ]);
    } finally {
      receiver.respond(() => ({ status: 204 }));
    }
    expect(
      (await api.send('PATCH', path, { key, headers: json, body: '{"enabled": true}' })).json,
    ).toMatchObject({ enabled: true, disabled_reason: null });
    const [, again] = await receiver.waitFor(2, { path: '/gone' });
    expect(JSON.parse(again.body).data.object.name).toBe('first');
  });

  it('cuts off a receiver that hangs at the timeout, and a hanging endpoint delays no other', async () => {
    receiver.respond((request) => (request.path === '/hangs' ? 'hang' : { status: 204 }));
    try {
      const key = await api.createKey('webhooks-hang');
      const post = (url: string) =>
        api.send('POST', '/v1/webhook-endpoints', {
          key,
          headers: json,
          body: JSON.stringify({ url: receiver.origin + url }),
        });
      const hangs = (await post('/hangs')).json;
      await post('/prompt');
      const made = new Map<string, number>();
      // Spread over 1.5 s, so that the hanging endpoint's first attempts are cut off meanwhile.
      for (let i = 0; i < 15; i++) {
        await createProject(key, `p${i}`);
        made.set(`p${i}`, performance.now());
        await sleep(100);
      }
      const prompt = await receiver.waitFor(15, { path: '/prompt', timeoutMs: 10_000 });
      // Each reached the other endpoint sooner after its change than an attempt to the hanging one
      // takes to time out (1 s): none waited for a place the hanging endpoint held. Timed from
      // each change, so that fifteen changes made slowly on a busy machine do not count.
      const late = prompt
        .map((request) => {
          const name = JSON.parse(request.body).data.object.name as string;
          return { name, afterMs: Math.round(request.at - made.get(name)!) };
        })
        .filter(({ afterMs }) => afterMs >= 950);
      expect(late).toEqual([]);
      // At most 10 at once to the hanging endpoint: each is held open for its 1 s timeout, so none
      // arrived with 10 others in the 950 ms before it.
      const hung = receiver.received.filter((r) => r.path === '/hangs').map((r) => r.at);
      const atOnce = hung.map((at) => hung.filter((other) => other <= at && other > at - 950));
      expect(Math.max(...atOnce.map((open) => open.length))).toBeLessThanOrEqual(10);
      const log = await logUntil(
        key,
        hangs.webhook_endpoint_id,
        (l) => l.filter((d) => d.status === 'failed').length >= 10,
        5000,
      );
      const failed = log.filter((d) => d.status === 'failed');
      expect(failed.length).toBeGreaterThanOrEqual(10);
      for (const attempt of failed) {
        expect(attempt.error).toBe('timeout');
        expect(attempt.response_status).toBeNull();
        expect(attempt.duration_ms).toBeGreaterThanOrEqual(950);
        expect(attempt.duration_ms).toBeLessThan(2000);
      }
      await api.send('DELETE', `/v1/webhook-endpoints/${hangs.webhook_endpoint_id}`, { key });
    } finally {
      receiver.respond(() => ({ status: 204 }));
    }
  });

  it('does not follow a redirect', async () => {
    receiver.respond((request) =>
      request.path === '/moved'
        ? { status: 302, headers: { Location: `${receiver.origin}/moved-to` } }
        : { status: 204 },
    );
    try {
      const { key, endpoint } = await registered('/moved');
      await createProject(key);
      const log = await logUntil(key, endpoint.webhook_endpoint_id, (l) =>
        l.some((d) => d.status === 'failed'),
      );
      expect(log.find((d) => d.status === 'failed')).toMatchObject({
        attempt: 1,
        response_status: 302,
        error: 'redirect not followed',
      });
      await sleep(200);
      expect(receiver.received.filter((r) => r.path === '/moved-to')).toEqual([]);
      await api.send('PATCH', `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}`, {
        key,
        headers: json,
        body: '{"enabled": false}',
      });
    } finally {
      receiver.respond(() => ({ status: 204 }));
    }
  });

  it('signs with the old and the new secret for 24 hours after a rotation', async () => {
    const { key, endpoint } = await registered('/rotated');
    const rotated = await api.send(
      'POST',
      `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}/rotate-secret`,
      { key },
    );
    expect(rotated.status).toBe(200);
    expect(rotated.json).toEqual({ secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/) });
    expect(rotated.json.secret).not.toBe(endpoint.secret);
    await createProject(key);
    const [request] = await receiver.waitFor(1, { path: '/rotated' });
    expect(request.headers['webhook-signature']).toMatch(
      /^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/,
    );
    const [event] = await feed(key);
    expect(new Webhook(rotated.json.secret).verify(request.body, headersOf(request))).toEqual(
      event,
    );
    expect(new Webhook(endpoint.secret).verify(request.body, headersOf(request))).toEqual(event);

    // A second rotation keeps both replaced secrets signing: each for 24 hours after its replacement.
    const third = (
      await api.send(
        'POST',
        `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}/rotate-secret`,
        { key },
      )
    ).json.secret;
    await createProject(key);
    const [, second] = await receiver.waitFor(2, { path: '/rotated' });
    expect(String(second.headers['webhook-signature']).split(' ')).toHaveLength(3);
    for (const secret of [third, rotated.json.secret, endpoint.secret])
      expect(() => new Webhook(secret).verify(second.body, headersOf(second))).not.toThrow();
    // Past their 24 hours, only the newest signs.
    await api.service
      .knex('webhook_endpoints')
      .where('webhook_endpoint_id', endpoint.webhook_endpoint_id)
      .update({ retired_secrets: '[]' });
    await createProject(key);
    const [, , last] = await receiver.waitFor(3, { path: '/rotated' });
    expect(last.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(() => new Webhook(third).verify(last.body, headersOf(last))).not.toThrow();
  });

  it('answers a retried rotation with the same secret, and takes at most 5 rotations a day', async () => {
    const { key, endpoint } = await registered('/rotations');
    const path = `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}/rotate-secret`;
    const rotate = (idempotencyKey?: string) =>
      api.send('POST', path, {
        key,
        headers: idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {},
      });
    const first = await rotate('rotate-1');
    const retried = await rotate('rotate-1');
    expect([retried.status, retried.json, retried.headers.get('idempotent-replayed')]).toEqual([
      200,
      first.json,
      'true',
    ]);
    // The same key on another endpoint is another request: it is refused, not answered with this secret.
    const other = await registered('/rotations-other', {}, key);
    const elsewhere = await api.send(
      'POST',
      `/v1/webhook-endpoints/${other.endpoint.webhook_endpoint_id}/rotate-secret`,
      { key, headers: { 'Idempotency-Key': 'rotate-1' } },
    );
    expect([elsewhere.status, elsewhere.json.type]).toEqual([
      422,
      '/problems/idempotency-key-reused',
    ]);
    for (let i = 2; i <= 5; i++) expect((await rotate()).status).toBe(200);
    const refused = await rotate();
    expect([refused.status, refused.json.type]).toEqual([429, '/problems/rate-limited']);
    expect(refused.json.detail).toContain('rotated 5 times in the last 24 hours');
    expect(refused.json.detail).toMatch(/the next rotation is allowed in 86\d{3} seconds\.$/);
    expect(refused.headers.get('retry-after')).toBe('3600');
    // The secret is still the fifth rotation's: nothing changed.
    await createProject(key);
    const [request] = await receiver.waitFor(1, { path: '/rotations' });
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(6);
  });

  it('refuses a redelivery to a disabled endpoint with 409, and takes it once enabled again', async () => {
    const { key, endpoint } = await registered('/disabled-redelivery');
    await createProject(key);
    const [event] = await feed(key);
    await receiver.waitFor(1, { path: '/disabled-redelivery' });
    const endpointPath = `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}`;
    const disable = (enabled: boolean) =>
      api.send('PATCH', endpointPath, { key, headers: json, body: JSON.stringify({ enabled }) });
    expect((await disable(false)).status).toBe(200);
    const redeliver = () =>
      api.send('POST', `${endpointPath}/deliveries`, {
        key,
        headers: json,
        body: JSON.stringify({ event_id: event.event_id }),
      });
    const refused = await redeliver();
    expect([refused.status, refused.json.type, refused.json.detail]).toEqual([
      409,
      '/problems/endpoint-disabled',
      `Webhook endpoint ${endpoint.webhook_endpoint_id} is disabled; enable it before asking for a redelivery.`,
    ]);
    expect((await disable(true)).status).toBe(200);
    expect((await redeliver()).status).toBe(202);
    await receiver.waitFor(2, { path: '/disabled-redelivery' });
  });

  it('redelivers a kept event on request, whatever the type filter, with the same webhook-id', async () => {
    const { key, endpoint } = await registered('/again', { event_types: ['task.deleted'] });
    await createProject(key);
    const [event] = await feed(key);
    await sleep(400);
    expect(receiver.received.filter((r) => r.path === '/again')).toEqual([]);
    const path = `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}/deliveries`;
    const planned = await api
      .client(key)
      .POST('/v1/webhook-endpoints/{webhook_endpoint_id}/deliveries', {
        params: { path: { webhook_endpoint_id: endpoint.webhook_endpoint_id } },
        body: { event_id: event.event_id },
      });
    expect(planned.response.status).toBe(202);
    expect(planned.data).toEqual({
      delivery_id: expect.any(String),
      event_id: event.event_id,
      event_type: 'project.created',
      attempt: 1,
      status: 'pending',
      response_status: null,
      error: null,
      duration_ms: null,
      created_at: expect.any(String),
      next_attempt_at: planned.data!.created_at,
    });
    const [request] = await receiver.waitFor(1, { path: '/again' });
    expect(request.headers['webhook-id']).toBe(event.event_id);
    expect(new Webhook(endpoint.secret).verify(request.body, headersOf(request))).toEqual(event);

    const unknown = await api.send('POST', path, {
      key,
      headers: json,
      body: JSON.stringify({ event_id: endpoint.webhook_endpoint_id }),
    });
    expect([unknown.status, unknown.json.type]).toEqual([422, '/problems/unknown-event']);
    const other = await api.createKey('webhooks-other-events');
    await createProject(other);
    const [theirs] = await feed(other);
    expect(
      (
        await api.send('POST', path, {
          key,
          headers: json,
          body: JSON.stringify({ event_id: theirs.event_id }),
        })
      ).status,
    ).toBe(422);
  });

  it('stops pending deliveries of an endpoint disabled or deleted', async () => {
    receiver.respond((request) =>
      request.path === '/stopped' ? { status: 500 } : { status: 204 },
    );
    try {
      const { key, endpoint } = await registered('/stopped');
      const path = `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}`;
      await createProject(key);
      await receiver.waitFor(1, { path: '/stopped' });
      await api.send('PATCH', path, { key, headers: json, body: '{"enabled": false}' });
      const count = receiver.received.filter((r) => r.path === '/stopped').length;
      await sleep(1500);
      expect(receiver.received.filter((r) => r.path === '/stopped').length).toBe(count);
      expect((await deliveryLog(key, endpoint.webhook_endpoint_id))[0]).toMatchObject({
        status: 'pending',
      });
      expect((await api.send('DELETE', path, { key })).status).toBe(204);
      expect(
        await api.service
          .knex('webhook_deliveries')
          .where('webhook_endpoint_id', endpoint.webhook_endpoint_id),
      ).toEqual([]);
    } finally {
      receiver.respond(() => ({ status: 204 }));
    }
  });

  it('sends nothing more than what is in flight once an endpoint is disabled, though more were claimed', async () => {
    receiver.respond((request) =>
      request.path === '/slow-disabled'
        ? new Promise((resolve) => setTimeout(() => resolve({ status: 204 }), 700))
        : { status: 204 },
    );
    try {
      const { key, endpoint } = await registered('/slow-disabled');
      // At once, so that they are claimed together: 10 in flight, 20 claimed ahead. The endpoint
      // is disabled once all 30 are planned (an event planned after it is never sent to it), while
      // the first 10 are still waiting for their answers.
      await Promise.all(Array.from({ length: 30 }, (_, i) => createProject(key, `p${i}`)));
      await receiver.waitFor(1, { path: '/slow-disabled' });
      // Each event's attempts: on a machine slow enough, one may have timed out and been planned again.
      const events = (l: WebhookDelivery[]) => new Set(l.map((d) => d.event_id)).size;
      expect(
        events(await logUntil(key, endpoint.webhook_endpoint_id, (l) => events(l) === 30)),
      ).toBe(30);
      const disabled = await api.send(
        'PATCH',
        `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}`,
        { key, headers: json, body: '{"enabled": false}' },
      );
      expect(disabled.status).toBe(200);
      const disabledAt = performance.now();
      await sleep(1600);
      const received = receiver.received.filter((r) => r.path === '/slow-disabled');
      // What was in flight (answered 700 ms after it came), and nothing after: the attempts claimed
      // ahead are dropped at the next poll (200 ms), before a slot frees.
      expect(received.filter((r) => r.at > disabledAt + 400)).toEqual([]);
      expect(received.length).toBeLessThan(30);
      // Every attempt made is written back (succeeded, or failed if its answer came after the
      // timeout); what was claimed ahead is given back, pending, for when the endpoint is enabled again.
      const made = (l: WebhookDelivery[]) => l.filter((d) => d.status !== 'pending');
      const log = await logUntil(
        key,
        endpoint.webhook_endpoint_id,
        (l) => made(l).length === received.length,
      );
      expect(made(log)).toHaveLength(received.length);
      expect(log.some((d) => d.status === 'pending')).toBe(true);
    } finally {
      receiver.respond(() => ({ status: 204 }));
    }
  });

  it('disables an endpoint whose every attempt has failed for 5 days', async () => {
    receiver.respond((request) =>
      request.path === '/failing' ? { status: 500 } : { status: 204 },
    );
    try {
      const { key, endpoint } = await registered('/failing');
      const path = `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}`;
      await createProject(key);
      await receiver.waitFor(1, { path: '/failing' });
      await logUntil(key, endpoint.webhook_endpoint_id, (l) =>
        l.some((d) => d.status === 'failed'),
      );
      const row = () =>
        api.service
          .knex('webhook_endpoints')
          .where('webhook_endpoint_id', endpoint.webhook_endpoint_id);
      expect((await row().first()).failing_since).not.toBeNull();
      // Failing for a little under 5 days: still enabled after another failure.
      await row().update({
        failing_since: toDbTimestamp(new Date(Date.now() - 5 * 86_400_000 + 60_000).toISOString()),
      });
      await receiver.waitFor(2, { path: '/failing' });
      await sleep(200);
      expect((await api.send('GET', path, { key })).json.enabled).toBe(true);
      await row().update({
        failing_since: toDbTimestamp(new Date(Date.now() - 5 * 86_400_000 - 1000).toISOString()),
      });
      await receiver.waitFor(3, { path: '/failing' });
      const deadline = Date.now() + 3000;
      while ((await api.send('GET', path, { key })).json.enabled && Date.now() < deadline)
        await sleep(50);
      expect((await api.send('GET', path, { key })).json).toMatchObject({
        enabled: false,
        disabled_reason: 'failing',
      });
      // A success ends a run of failures.
      receiver.respond(() => ({ status: 204 }));
      await api.send('PATCH', path, { key, headers: json, body: '{"enabled": true}' });
      expect((await row().first()).failing_since).toBeNull();
    } finally {
      receiver.respond(() => ({ status: 204 }));
    }
  });

  it('keeps the connection to an endpoint alive between deliveries', async () => {
    const { key } = await registered('/kept-alive');
    for (let i = 0; i < 5; i++) {
      await createProject(key, `k${i}`);
      await receiver.waitFor(i + 1, { path: '/kept-alive' });
    }
    const ports = new Set(
      receiver.received.filter((r) => r.path === '/kept-alive').map((r) => r.remotePort),
    );
    expect(ports.size).toBe(1);
  });
});

describe('retention', () => {
  it("removes delivery attempts older than the events' retention in the background", async () => {
    const kept = await startTestService({
      config: {
        cleanupIntervalSeconds: 0.2,
        eventRetentionDays: 1,
        webhookAllowPrivateTargets: true,
      },
    });
    try {
      const key = await kept.createKey('retained');
      const endpoint = (
        await kept
          .client(key)
          .POST('/v1/webhook-endpoints', { body: { url: `${receiver.origin}/retained` } })
      ).data!;
      for (const name of ['old', 'new'])
        await kept.client(key).POST('/v1/projects', { body: { name } });
      await receiver.waitFor(2, { path: '/retained' });
      const log = () =>
        kept.service
          .knex('webhook_deliveries')
          .where('webhook_endpoint_id', endpoint.webhook_endpoint_id)
          .orderBy('created_at');
      const deadline = Date.now() + 5000;
      while ((await log()).some((d) => d.status !== 'succeeded') && Date.now() < deadline)
        await sleep(50);
      const [old] = await log();
      await kept.service
        .knex('webhook_deliveries')
        .where('delivery_id', old.delivery_id)
        .update({
          created_at: toDbTimestamp(new Date(Date.now() - 86_400_000 - 1000).toISOString()),
        });
      while ((await log()).length > 1 && Date.now() < deadline) await sleep(50);
      expect((await log()).map((d) => d.event_id)).not.toContain(old.event_id);
      expect(await log()).toHaveLength(1);
    } finally {
      await kept.stop();
    }
  });
});
