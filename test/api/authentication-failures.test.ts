/**
 * Failed authentication draws on a budget per client address (AUTH_FAILURES_PER_MINUTE, 5
 * here): past it, the address gets 429 before any key is looked up, so a flood of made-up keys
 * costs neither a database lookup each nor a rate-limit count per key. A valid key never needs
 * the budget: every instance knows every active key (read from the database at start, and the
 * keys created since on demand), so it gets through a flood from its own address. The service
 * trusts its loopback proxy here, so each test speaks from addresses of its own through
 * X-Forwarded-For.
 */
import type { Knex } from 'knex';
import { generateApiKey, hashApiKey } from '../../src/api-key-format';
import type { Config } from '../../src/config';
import { createRepositories, type Repositories } from '../../src/all-repositories';
import { toDbTimestamp } from '../../src/db/timestamps';
import { startService, type RunningService } from '../../src/server';
import { assertConformsToContract } from '../support/contract';
import { testConfig } from '../support/test-config';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { startTestService, type TestService } from '../support/test-service';

const budget: Partial<Config> = {
  authFailuresPerMinute: 5,
  rateLimitPerMinute: 100_000,
  trustProxy: ['loopback'],
};

/** The hashes each database lookup of a key asked for, and the reads of the keys created lately. */
function watchKeyReads(knex: Knex) {
  const reads = { lookups: [] as string[], catchUps: 0 };
  knex.on('query', (query: { sql: string; bindings?: unknown[] }) => {
    if (
      !query.sql.includes('api_keys') ||
      !query.sql.trimStart().toLowerCase().startsWith('select')
    )
      return;
    if (/key_hash[`"]? (= \?|in \()/i.test(query.sql))
      reads.lookups.push(
        ...(query.bindings ?? []).filter(
          (b): b is string => typeof b === 'string' && /^[0-9a-f]{64}$/.test(b),
        ),
      );
    else if (/created_at[`"]? >= \?/.test(query.sql)) reads.catchUps++;
  });
  return reads;
}

let api: TestService;
let tenantId: string;
let reads: ReturnType<typeof watchKeyReads>;
const lookupCount = () => reads.lookups.length;

beforeAll(async () => {
  api = await startTestService({ config: budget });
  tenantId = (await api.repositories.tenants.findOrCreate('acme')).tenant_id;
  reads = watchKeyReads(api.service.knex);
});
afterAll(() => api.stop());

const from = (address: string, authorization?: string) => ({
  headers: {
    'X-Forwarded-For': address,
    ...(authorization ? { Authorization: authorization } : {}),
  },
});
const madeUpKey = () => `Bearer ${generateApiKey()}`;

async function storedKey(
  options: { revoked?: boolean; expiresAt?: Date; repositories?: Repositories } = {},
): Promise<string> {
  const repositories = options.repositories ?? api.repositories;
  const key = generateApiKey();
  const tenant = (await repositories.tenants.findOrCreate('acme')).tenant_id;
  const keyId = await repositories.apiKeys.insert(tenant, hashApiKey(key), ['read', 'write'], {
    expiresAt: options.expiresAt,
  });
  if (options.revoked) await repositories.apiKeys.revoke(keyId);
  return `Bearer ${key}`;
}

it('answers 429 with Retry-After once an address has failed 5 times, whatever the kind of failure, and looks nothing up', async () => {
  const address = '203.0.113.1';
  const failures = [
    undefined,
    'Bearer not-a-key',
    madeUpKey(),
    await storedKey({ revoked: true }),
    await storedKey({ expiresAt: new Date(Date.now() - 1000) }),
  ];
  for (const authorization of failures) {
    expect((await api.send('GET', '/v1/projects', from(address, authorization))).status).toBe(401);
  }
  // The counter sees lookups: the unknown, revoked and expired keys were looked up.
  expect(lookupCount()).toBeGreaterThanOrEqual(3);
  const lookupsBefore = lookupCount();
  for (let i = 0; i < 10; i++) {
    const res = await api.send('GET', '/v1/projects', from(address, madeUpKey()));
    expect([res.status, res.json.type]).toEqual([429, '/problems/rate-limited']);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(res.headers.get('ratelimit')).toBeNull();
  }
  expect(lookupCount()).toBe(lookupsBefore);
  // No key at all, or one that is not even well formed, is refused the same way.
  expect((await api.send('GET', '/v1/projects', from(address))).status).toBe(429);
  expect(
    (
      await api.send('POST', '/v1/projects', {
        ...from(address, 'Bearer junk'),
        body: '{"name":"x"}',
      })
    ).status,
  ).toBe(429);
});

it('keeps other addresses, and every valid key from the flooded address, working', async () => {
  const flooded = '203.0.113.2';
  const regular = await storedKey();
  expect((await api.send('GET', '/v1/projects', from(flooded, regular))).status).toBe(200);
  for (let i = 0; i < 10; i++) await api.send('GET', '/v1/projects', from(flooded, madeUpKey()));
  expect((await api.send('GET', '/v1/projects', from(flooded, madeUpKey()))).status).toBe(429);

  // The key that worked before the flood is still looked up, and works; so does one made during
  // the flood, which this instance has never seen.
  expect((await api.send('GET', '/v1/projects', from(flooded, regular))).status).toBe(200);
  expect((await api.send('GET', '/v1/projects', from(flooded, await storedKey()))).status).toBe(
    200,
  );
  // Other addresses keep their own budget.
  expect(
    (await api.send('GET', '/v1/projects', from('203.0.113.3', await storedKey()))).status,
  ).toBe(200);
  expect((await api.send('GET', '/v1/projects', from('203.0.113.3', madeUpKey()))).status).toBe(
    401,
  );
});

it('counts a key revoked after it was accepted as a failure again', async () => {
  const address = '203.0.113.4';
  const key = generateApiKey();
  const keyId = await api.repositories.apiKeys.insert(tenantId, hashApiKey(key), ['read']);
  expect((await api.send('GET', '/v1/projects', from(address, `Bearer ${key}`))).status).toBe(200);
  await api.repositories.apiKeys.revoke(keyId);
  for (let i = 0; i < 5; i++)
    expect((await api.send('GET', '/v1/projects', from(address, `Bearer ${key}`))).status).toBe(
      401,
    );
  expect((await api.send('GET', '/v1/projects', from(address, `Bearer ${key}`))).status).toBe(429);
});

it('takes the address from X-Forwarded-For only from a trusted proxy', async () => {
  const untrusting = await startTestService({ config: { authFailuresPerMinute: 2 } });
  try {
    // Each request names another address, but the socket's (loopback) is the one counted.
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push(
        (await untrusting.send('GET', '/v1/projects', from(`198.51.100.${i}`, madeUpKey()))).status,
      );
    expect(statuses).toEqual([401, 401, 429, 429]);
  } finally {
    await untrusting.stop();
  }
});

/** How many times each status occurs. */
const tally = (statuses: number[]) =>
  statuses.reduce<Record<number, number>>(
    (counts, status) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }),
    {},
  );

it('lets 500 bad keys sent at once from one address cost at most the budget in lookups, and serves the valid keys sent among them', async () => {
  const address = '203.0.113.5';
  const usedBefore = await storedKey();
  expect((await api.send('GET', '/v1/projects', from('203.0.113.6', usedBefore))).status).toBe(200);
  const valid = [usedBefore, await storedKey()];
  const validHashes = new Set(
    valid.map((authorization) => hashApiKey(authorization.slice('Bearer '.length))),
  );
  const lookupsBefore = lookupCount();
  const catchUpsBefore = reads.catchUps;
  const began = Date.now();

  const bad = Array.from({ length: 500 }, () =>
    api.send('GET', '/v1/projects', from(address, madeUpKey())),
  );
  const good = Array.from({ length: 20 }, (_, i) =>
    api.send('GET', '/v1/projects', from(address, valid[i % 2])),
  );
  const badStatuses = (await Promise.all(bad)).map((res) => res.status);
  const goodStatuses = (await Promise.all(good)).map((res) => res.status);
  const elapsedMs = Date.now() - began;

  expect(tally(badStatuses)).toEqual({ 401: 5, 429: 495 });
  expect(goodStatuses).toEqual(Array(20).fill(200));
  expect(reads.lookups.slice(lookupsBefore).filter((hash) => !validHashes.has(hash))).toHaveLength(
    5,
  );
  // The reads of keys created lately that the flood asked for begin at most every 100 ms.
  expect(reads.catchUps - catchUpsBefore).toBeLessThanOrEqual(Math.floor(elapsedMs / 100) + 2);
});

describe('on an instance started after the keys were made', () => {
  let database: TestDatabase;
  let first: RunningService;
  let second: RunningService | undefined;
  let firstRepositories: Repositories;

  beforeAll(async () => {
    database = await createTestDatabase();
    first = await startService(testConfig(database.config, budget));
    firstRepositories = createRepositories(first.knex);
  });
  afterAll(async () => {
    await second?.stop();
    await first.stop();
    await database.drop();
  });

  async function call(
    service: RunningService,
    address: string,
    authorization: string,
  ): Promise<number> {
    const response = await fetch(`${service.url}/v1/projects`, {
      headers: from(address, authorization).headers,
    });
    await assertConformsToContract('GET', '/v1/projects', {
      status: response.status,
      headers: response.headers,
      text: await response.text(),
    });
    return response.status;
  }

  it('serves every valid key through a flood from its address, and refuses a revoked one at the next request', async () => {
    const usedElsewhere = await storedKey({ repositories: firstRepositories });
    expect(await call(first, '192.0.2.1', usedElsewhere)).toBe(200);
    const neverUsed = await storedKey({ repositories: firstRepositories });
    const doomed = generateApiKey();
    const doomedId = await firstRepositories.apiKeys.insert(
      (await firstRepositories.tenants.findOrCreate('acme')).tenant_id,
      hashApiKey(doomed),
      ['read'],
    );
    // Made long before the instance starts: only its reading of every key at start can know them.
    await first
      .knex('api_keys')
      .update({ created_at: toDbTimestamp(new Date(Date.now() - 2 * 3_600_000).toISOString()) });

    second = await startService(testConfig(database.config, budget));
    // Made by another pool, as the CLI in another process makes keys: this instance has not read it.
    const madeAfterStart = await storedKey({ repositories: firstRepositories });

    const address = '198.51.100.7';
    expect(await call(second, address, `Bearer ${doomed}`)).toBe(200);
    const badStatuses: number[] = [];
    const validStatuses: number[] = [];
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 3; i++) badStatuses.push(await call(second, address, madeUpKey()));
      for (const key of [usedElsewhere, neverUsed, madeAfterStart])
        validStatuses.push(await call(second, address, key));
    }
    expect(tally(badStatuses)).toEqual({ 401: 5, 429: 13 });
    expect(validStatuses).toEqual(Array(18).fill(200));

    await firstRepositories.apiKeys.revoke(doomedId);
    expect(await call(second, address, `Bearer ${doomed}`)).toBe(401);
    expect(await call(second, address, `Bearer ${doomed}`)).toBe(429);
  });
});
