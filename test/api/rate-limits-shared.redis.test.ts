/**
 * Two instances behind one balancer, sharing counts in the local Redis: together they enforce
 * one limit per key.
 */
import { shareKey, startTestService, type TestService } from '../support/test-service';

const redisUrl = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
let first: TestService;
let second: TestService;

beforeAll(async () => {
  first = await startTestService({ config: { rateLimitPerMinute: 6, redisUrl } });
  second = await startTestService({ config: { rateLimitPerMinute: 6, redisUrl } });
});
afterAll(async () => {
  await first.stop();
  await second.stop();
});

it('enforces one limit across instances', async () => {
  // The instances have databases of their own; the key exists in both, as if they shared one.
  const key = await first.createKey('shared');
  await shareKey(first, second, key);
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) {
    const instance = i % 2 === 0 ? first : second;
    statuses.push((await instance.send('GET', '/v1/projects', { key })).status);
  }
  expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
});
