/**
 * The fences between tenants on webhooks: at most WEBHOOK_ENDPOINTS_PER_TENANT endpoints a tenant,
 * enabled or not, also under concurrent registrations; at most 60 redeliveries a minute per
 * endpoint; Idempotency-Key on registration; no user information in a URL, even where private
 * targets are allowed.
 */
import { v7 as uuidv7 } from 'uuid';
import { nowForDb } from '../../src/db/timestamps';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { startTestService, type TestService } from '../support/test-service';

const limit = 5;
let api: TestService;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [api, receiver] = await Promise.all([
    startTestService({
      config: {
        webhookAllowPrivateTargets: true,
        webhookEndpointsPerTenant: limit,
        webhookRetryScheduleMs: [60_000],
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
const newTenant = () => api.createKey(`fences-${++tenants}`);

const register = (key: string, path = '/hook', headers: Record<string, string> = {}) =>
  api.send('POST', '/v1/webhook-endpoints', {
    key,
    headers: { ...json, ...headers },
    body: JSON.stringify({ url: receiver.origin + path }),
  });

/** The endpoints the tenant has, as its list shows them. */
async function listed(key: string): Promise<string[]> {
  const response = await api.send('GET', '/v1/webhook-endpoints?limit=200', { key });
  expect(response.status).toBe(200);
  return response.json.data.map(
    (endpoint: { webhook_endpoint_id: string }) => endpoint.webhook_endpoint_id,
  );
}

async function registerMany(key: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const response = await register(key);
    expect(response.status).toBe(201);
    ids.push(response.json.webhook_endpoint_id);
  }
  return ids;
}

function expectLimitReached(response: { status: number; json: any }) {
  expect(response.status).toBe(422);
  expect(response.json).toMatchObject({ type: '/problems/limit-reached', status: 422, limit });
  expect(response.json.detail).toContain(`${limit} webhook endpoints`);
}

describe('endpoints per tenant', () => {
  it('refuses one more than the limit, disabled ones counted; deleting one makes room; other tenants are not held back', async () => {
    const key = await newTenant();
    const ids = await registerMany(key, limit);
    const disabled = await api.send('PATCH', `/v1/webhook-endpoints/${ids[0]}`, {
      key,
      headers: json,
      body: '{"enabled": false}',
    });
    expect(disabled.status).toBe(200);
    expectLimitReached(await register(key));
    expect(await listed(key)).toHaveLength(limit);

    expect((await api.send('DELETE', `/v1/webhook-endpoints/${ids[1]}`, { key })).status).toBe(204);
    expect((await register(key)).status).toBe(201);
    expectLimitReached(await register(key));
    // A delete of what is gone gives nothing back.
    expect((await api.send('DELETE', `/v1/webhook-endpoints/${ids[1]}`, { key })).status).toBe(404);
    expectLimitReached(await register(key));

    expect((await register(await newTenant())).status).toBe(201);
  });

  it(`leaves exactly ${limit} endpoints after 30 concurrent registrations at one below the limit`, async () => {
    const key = await newTenant();
    await registerMany(key, limit - 1);
    const answers = await Promise.all(Array.from({ length: 30 }, () => register(key)));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 422)).toHaveLength(29);
    for (const refused of answers.filter((answer) => answer.status === 422))
      expectLimitReached(refused);
    expect(await listed(key)).toHaveLength(limit);
  });

  it('counts endpoints registered before counting began, also under concurrent registrations', async () => {
    const key = await newTenant();
    const { tenant_id } = await api.service
      .knex('tenants')
      .first('tenant_id')
      .where('name', `fences-${tenants}`);
    // As an older version registered them: rows without a count.
    const now = nowForDb();
    const rows = Array.from({ length: limit - 1 }, () => ({
      webhook_endpoint_id: uuidv7(),
      tenant_id,
      url: receiver.origin + '/older',
      event_types: null,
      description: '',
      enabled: true,
      secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
      created_at: now,
      updated_at: now,
    }));
    await api.service.knex('webhook_endpoints').insert(rows);
    await api.service.knex('webhook_endpoint_counts').where('tenant_id', tenant_id).delete();
    const answers = await Promise.all(Array.from({ length: 30 }, () => register(key)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, ...Array(29).fill(422)]);
    expect(await listed(key)).toHaveLength(limit);
  });
});

describe('redeliveries', () => {
  it('takes 60 a minute per endpoint: the 61st is 429 with Retry-After, and another endpoint is not held back', async () => {
    const key = await newTenant();
    const [endpointId, otherId] = await registerMany(key, 2);
    expect(
      (await api.send('POST', '/v1/projects', { key, headers: json, body: '{"name": "p"}' }))
        .status,
    ).toBe(201);
    let eventId: string | undefined;
    for (const deadline = Date.now() + 5000; eventId === undefined && Date.now() < deadline;) {
      eventId = (await api.send('GET', '/v1/events', { key })).json.data[0]?.event_id;
      if (eventId === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const redeliver = (id: string) =>
      api.send('POST', `/v1/webhook-endpoints/${id}/deliveries`, {
        key,
        headers: json,
        body: JSON.stringify({ event_id: eventId }),
      });
    const answers = await Promise.all(Array.from({ length: 61 }, () => redeliver(endpointId)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([...Array(60).fill(202), 429]);
    const [refused] = answers.filter((answer) => answer.status === 429);
    expect(refused.json).toMatchObject({ type: '/problems/rate-limited', status: 429 });
    expect(refused.json.detail).toContain('60 redeliveries');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect((await redeliver(otherId)).status).toBe(202);
    // The refused one planned nothing: the first delivery and 60 redeliveries.
    const log = await api.send('GET', `/v1/webhook-endpoints/${endpointId}/deliveries?limit=200`, {
      key,
    });
    expect(log.json.data).toHaveLength(61);
  });
});

describe('Idempotency-Key on registration', () => {
  it('replays the first answer, secret included, with Idempotent-Replayed, and registers nothing more', async () => {
    const key = await newTenant();
    const first = await register(key, '/once', { 'Idempotency-Key': 'register-1' });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await register(key, '/once', { 'Idempotency-Key': 'register-1' });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json).toEqual(first.json);
    expect(again.json.secret).toMatch(/^whsec_/);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(await listed(key)).toEqual([first.json.webhook_endpoint_id]);
  });

  it('refuses the same key with another body: 422, nothing registered', async () => {
    const key = await newTenant();
    expect((await register(key, '/first', { 'Idempotency-Key': 'register-2' })).status).toBe(201);
    const other = await register(key, '/second', { 'Idempotency-Key': 'register-2' });
    expect([other.status, other.json.type]).toEqual([422, '/problems/idempotency-key-reused']);
    expect(await listed(key)).toHaveLength(1);
  });

  it('registers once from 20 concurrent requests with one key; the rest replay or are told to wait', async () => {
    const key = await newTenant();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        register(key, '/stampede', { 'Idempotency-Key': 'stampede' }),
      ),
    );
    expect(answers.every((answer) => answer.status === 201 || answer.status === 409)).toBe(true);
    const created = answers.filter((answer) => answer.status === 201);
    expect(new Set(created.map((answer) => answer.json.secret)).size).toBe(1);
    expect(
      created.filter((answer) => answer.headers.get('idempotent-replayed') === null),
    ).toHaveLength(1);
    expect(await listed(key)).toHaveLength(1);
  });

  it('replays a registration at the limit; a refusal binds nothing, so its retry registers once there is room', async () => {
    const key = await newTenant();
    const first = await register(key, '/hook', { 'Idempotency-Key': 'early' });
    const ids = [first.json.webhook_endpoint_id, ...(await registerMany(key, limit - 1))];
    const replay = await register(key, '/hook', { 'Idempotency-Key': 'early' });
    expect([replay.status, replay.json.webhook_endpoint_id]).toEqual([
      201,
      first.json.webhook_endpoint_id,
    ]);
    expectLimitReached(await register(key, '/hook', { 'Idempotency-Key': 'late' }));
    expect((await api.send('DELETE', `/v1/webhook-endpoints/${ids[2]}`, { key })).status).toBe(204);
    const retried = await register(key, '/hook', { 'Idempotency-Key': 'late' });
    expect([retried.status, retried.headers.get('idempotent-replayed')]).toEqual([201, null]);
  });
});

describe('user information in a URL', () => {
  it.each([
    'https://user:pass@hooks.example.com/x',
    'https://user@hooks.example.com/x',
    'https://@hooks.example.com/x',
    'http://admin:secret@127.0.0.1:1029/x',
  ])(
    'refuses %s at registration and on a change, even where private targets are allowed',
    async (url) => {
      const key = await newTenant();
      const registered = await api.send('POST', '/v1/webhook-endpoints', {
        key,
        headers: json,
        body: JSON.stringify({ url }),
      });
      expect([registered.status, registered.json.type]).toEqual([400, '/problems/invalid-request']);
      expect(registered.json.errors).toEqual([
        {
          in: 'body',
          pointer: '/url',
          message: 'must not contain user information (user:password@)',
        },
      ]);
      const [id] = await registerMany(key, 1);
      const changed = await api.send('PATCH', `/v1/webhook-endpoints/${id}`, {
        key,
        headers: json,
        body: JSON.stringify({ url }),
      });
      expect([changed.status, changed.json.errors?.[0]?.pointer]).toEqual([400, '/url']);
      expect((await api.send('GET', `/v1/webhook-endpoints/${id}`, { key })).json.url).toBe(
        receiver.origin + '/hook',
      );
    },
  );
});
