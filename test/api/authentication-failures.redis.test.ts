/**
 * A flood of made-up keys costs one count per client address, not one per key: in the Redis the
 * counts live in (the test's own), the flood leaves a single key, and the per-key limit none.
 * Redis counts each failure before its lookup, so keys sent at once cannot overshoot the budget,
 * and an instance sharing the spent count still serves a valid key.
 */
import { generateApiKey } from '../../src/api-key-format';
import type { Config } from '../../src/config';
import { capturedLog } from '../support/captured-log';
import { OwnRedis } from '../support/own-redis';
import { startTestService, type TestService } from '../support/test-service';

let redis: OwnRedis;
let api: TestService;

/** A service counting in the test's Redis, once it is connected there. */
async function startWithRedis(config: Partial<Config> = {}): Promise<TestService> {
  const log = capturedLog();
  const service = await startTestService({
    config: { redisUrl: redis.url, logLevel: 'info', ...config },
    logDestination: log.stream,
  });
  await log.waitFor('redis connected: rate limits are shared across instances');
  return service;
}

beforeAll(async () => {
  redis = await OwnRedis.create();
  await redis.start();
  api = await startWithRedis({ authFailuresPerMinute: 5, rateLimitPerMinute: 1000 });
}, 60_000);
afterAll(async () => {
  await api?.stop();
  await redis.stop();
});

it('keeps one count for the address however many made-up keys it sends at once, and looks up only as many as the budget', async () => {
  let lookups = 0;
  // Keys looked up, however many one query asks for.
  api.service.knex.on('query', (query: { sql: string; bindings?: unknown[] }) => {
    if (query.sql.includes('api_keys') && /key_hash[`"]? (= \?|in \()/i.test(query.sql))
      lookups += (query.bindings ?? []).filter(
        (b) => typeof b === 'string' && /^[0-9a-f]{64}$/.test(b),
      ).length;
  });
  const answers = await Promise.all(
    Array.from({ length: 300 }, () => api.send('GET', '/v1/projects', { key: generateApiKey() })),
  );
  const statuses = new Map<number, number>();
  for (const { status } of answers) statuses.set(status, (statuses.get(status) ?? 0) + 1);
  expect(Object.fromEntries(statuses)).toEqual({ 401: 5, 429: 295 });
  expect(lookups).toBe(5);
  expect(await redis.keys('task-tracker:auth-failures:*')).toHaveLength(1);
  expect(await redis.keys('task-tracker:rate-limit:*')).toHaveLength(0);

  // Another instance, started now, shares the spent count; a key made after it started still
  // works there, and is counted by its id.
  const other = await startWithRedis({ authFailuresPerMinute: 5 });
  try {
    expect((await other.send('GET', '/v1/projects', { key: generateApiKey() })).status).toBe(429);
    const key = await other.createKey('acme');
    for (let i = 0; i < 5; i++)
      expect((await other.send('GET', '/v1/projects', { key })).status).toBe(200);
  } finally {
    await other.stop();
  }
  expect(await redis.keys('task-tracker:rate-limit:*')).toEqual([
    expect.stringMatching(/^task-tracker:rate-limit:key:[0-9a-f-]{36}$/),
  ]);
});
