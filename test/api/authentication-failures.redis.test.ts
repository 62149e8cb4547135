/**
 * A flood of made-up keys costs one count per client address, not one per key: in the Redis the
 * counts live in (the test's own), the flood leaves a single key, and the per-key limit none.
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
  const service = await startTestService({ config: { redisUrl: redis.url, logLevel: 'info', ...config }, logDestination: log.stream });
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

it('keeps one count for the address however many made-up keys it sends', async () => {
  const statuses = new Map<number, number>();
  for (let i = 0; i < 300; i++) {
    const { status } = await api.send('GET', '/v1/projects', { key: generateApiKey() });
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  }
  expect(Object.fromEntries(statuses)).toEqual({ 401: 5, 429: 295 });
  expect(await redis.keys('task-tracker:auth-failures:*')).toHaveLength(1);
  expect(await redis.keys('task-tracker:rate-limit:*')).toHaveLength(0);

  // A verified key is counted, by its id (from another instance: this address has spent its failures).
  const other = await startWithRedis();
  try {
    const key = await other.createKey('acme');
    expect((await other.send('GET', '/v1/projects', { key })).status).toBe(200);
  } finally {
    await other.stop();
  }
  expect(await redis.keys('task-tracker:rate-limit:*')).toEqual([expect.stringMatching(/^task-tracker:rate-limit:key:[0-9a-f-]{36}$/)]);
});
