/**
 * Failed authentication draws on a budget per client address (AUTH_FAILURES_PER_MINUTE, 5
 * here): past it, the address gets 429 before any key is looked up, so a flood of made-up keys
 * costs neither a database lookup each nor a rate-limit count per key. The service trusts its
 * loopback proxy here, so each test speaks from addresses of its own through X-Forwarded-For.
 */
import { generateApiKey, hashApiKey } from '../../src/api-key-format';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let tenantId: string;
let keyLookups = 0;

beforeAll(async () => {
  api = await startTestService({ config: { authFailuresPerMinute: 5, rateLimitPerMinute: 1000, trustProxy: ['loopback'] } });
  tenantId = (await api.repositories.tenants.findOrCreate('acme')).tenant_id;
  api.service.knex.on('query', (query: { sql: string }) => {
    if (query.sql.includes('api_keys') && query.sql.trimStart().toLowerCase().startsWith('select')) keyLookups++;
  });
});
afterAll(() => api.stop());

const from = (address: string, authorization?: string) => ({ headers: { 'X-Forwarded-For': address, ...(authorization ? { Authorization: authorization } : {}) } });
const madeUpKey = () => `Bearer ${generateApiKey()}`;

async function storedKey(options: { revoked?: boolean; expiresAt?: Date } = {}): Promise<string> {
  const key = generateApiKey();
  const keyId = await api.repositories.apiKeys.insert(tenantId, hashApiKey(key), ['read', 'write'], { expiresAt: options.expiresAt });
  if (options.revoked) await api.repositories.apiKeys.revoke(keyId);
  return `Bearer ${key}`;
}

it('answers 429 with Retry-After once an address has failed 5 times, whatever the kind of failure, and looks nothing up', async () => {
  const address = '203.0.113.1';
  const failures = [undefined, 'Bearer not-a-key', madeUpKey(), await storedKey({ revoked: true }), await storedKey({ expiresAt: new Date(Date.now() - 1000) })];
  for (const authorization of failures) {
    expect((await api.send('GET', '/v1/projects', from(address, authorization))).status).toBe(401);
  }
  // The counter sees lookups: the unknown, revoked and expired keys were looked up.
  expect(keyLookups).toBeGreaterThanOrEqual(3);
  const lookupsBefore = keyLookups;
  for (let i = 0; i < 20; i++) {
    const res = await api.send('GET', '/v1/projects', from(address, madeUpKey()));
    expect([res.status, res.json.type]).toEqual([429, '/problems/rate-limited']);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(res.headers.get('ratelimit')).toBeNull();
  }
  expect(keyLookups).toBe(lookupsBefore);
  // No key at all, or one that is not even well formed, is refused the same way.
  expect((await api.send('GET', '/v1/projects', from(address))).status).toBe(429);
  expect((await api.send('POST', '/v1/projects', { ...from(address, 'Bearer junk'), body: '{"name":"x"}' })).status).toBe(429);
});

it('keeps other addresses, and keys the instance accepted lately, working', async () => {
  const flooded = '203.0.113.2';
  const regular = await storedKey();
  expect((await api.send('GET', '/v1/projects', from(flooded, regular))).status).toBe(200);
  for (let i = 0; i < 10; i++) await api.send('GET', '/v1/projects', from(flooded, madeUpKey()));
  expect((await api.send('GET', '/v1/projects', from(flooded, madeUpKey()))).status).toBe(429);

  // The key that worked before the flood is still looked up, and works.
  expect((await api.send('GET', '/v1/projects', from(flooded, regular))).status).toBe(200);
  // A key this instance has not seen waits, like any other, until the address's minute is over.
  expect((await api.send('GET', '/v1/projects', from(flooded, await storedKey()))).status).toBe(429);
  // Other addresses keep their own budget.
  expect((await api.send('GET', '/v1/projects', from('203.0.113.3', await storedKey()))).status).toBe(200);
  expect((await api.send('GET', '/v1/projects', from('203.0.113.3', madeUpKey()))).status).toBe(401);
});

it('counts a key revoked after it was accepted as a failure again', async () => {
  const address = '203.0.113.4';
  const key = generateApiKey();
  const keyId = await api.repositories.apiKeys.insert(tenantId, hashApiKey(key), ['read']);
  expect((await api.send('GET', '/v1/projects', from(address, `Bearer ${key}`))).status).toBe(200);
  await api.repositories.apiKeys.revoke(keyId);
  for (let i = 0; i < 5; i++) expect((await api.send('GET', '/v1/projects', from(address, `Bearer ${key}`))).status).toBe(401);
  expect((await api.send('GET', '/v1/projects', from(address, `Bearer ${key}`))).status).toBe(429);
});

it('takes the address from X-Forwarded-For only from a trusted proxy', async () => {
  const untrusting = await startTestService({ config: { authFailuresPerMinute: 2 } });
  try {
    // Each request names another address, but the socket's (loopback) is the one counted.
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await untrusting.send('GET', '/v1/projects', from(`198.51.100.${i}`, madeUpKey()))).status);
    expect(statuses).toEqual([401, 401, 429, 429]);
  } finally {
    await untrusting.stop();
  }
});
