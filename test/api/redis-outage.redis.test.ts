/**
 * Redis is optional at run time: with REDIS_URL set and Redis down the service starts and serves,
 * counting per instance (and saying so once); a request never waits on Redis longer than
 * REDIS_TIMEOUT_MS; once Redis answers again, two instances share one limit again. The Redis is
 * the test's own, stopped, frozen and started at will.
 */
import { capturedLog } from '../support/captured-log';
import { OwnRedis } from '../support/own-redis';
import { shareKey, startTestService, type TestService } from '../support/test-service';

const unavailable = 'redis unavailable: rate limits count per instance until it answers again';
const connected = 'redis connected: rate limits are shared across instances';
const perMinute = 4;

let redis: OwnRedis;
const logs = [capturedLog(), capturedLog()];
let instances: TestService[];

beforeAll(async () => {
  redis = await OwnRedis.create();
  // Redis is not running yet.
  const config = {
    redisUrl: redis.url,
    redisTimeoutMs: 50,
    rateLimitPerMinute: perMinute,
    logLevel: 'info' as const,
  };
  instances = await Promise.all(
    logs.map((log) => startTestService({ config, logDestination: log.stream })),
  );
}, 60_000);
afterAll(async () => {
  for (const instance of instances ?? []) await instance.stop();
  await redis.stop();
});

/** A new key, in both instances' databases (of their own) as if they shared one: its counts start at 0. */
async function newKey(): Promise<string> {
  const key = await instances[0].createKey('acme');
  await shareKey(instances[0], instances[1], key);
  return key;
}

/** The statuses of `count` requests with the key, alternating between the instances, and the slowest request's time. */
async function requests(
  key: string,
  count: number,
  from = [0, 1],
): Promise<{ statuses: number[]; slowestMs: number }> {
  const statuses: number[] = [];
  let slowestMs = 0;
  for (let i = 0; i < count; i++) {
    const started = Date.now();
    statuses.push(
      (await instances[from[i % from.length]].send('GET', '/v1/projects', { key })).status,
    );
    slowestMs = Math.max(slowestMs, Date.now() - started);
  }
  return { statuses, slowestMs };
}

it('starts without Redis and limits each instance on its own, saying so once per instance', async () => {
  const key = await newKey();
  expect(await requests(key, perMinute + 1, [0])).toMatchObject({
    statuses: [200, 200, 200, 200, 429],
  });
  expect(await requests(key, perMinute + 1, [1])).toMatchObject({
    statuses: [200, 200, 200, 200, 429],
  });
  // The client has retried the connection several times by now.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  for (const log of logs) expect(log.withMessage(unavailable)).toHaveLength(1);
});

it('shares one limit once Redis answers', async () => {
  await redis.start();
  await Promise.all(logs.map((log) => log.waitFor(connected)));
  expect((await requests(await newKey(), perMinute + 2)).statuses).toEqual([
    200, 200, 200, 200, 429, 429,
  ]);
  expect(await redis.keys('task-tracker:rate-limit:*')).toHaveLength(1);
});

it('waits on a frozen Redis no longer than its timeout, counts in memory meanwhile, and shares again once it answers', async () => {
  redis.freeze();
  try {
    // Counted in memory meanwhile: each instance has its own count of the key's requests.
    const { statuses, slowestMs } = await requests(await newKey(), 6);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    // 50 ms for Redis, the rest for the request itself on a busy test machine; it used to wait forever.
    expect(slowestMs).toBeLessThan(1000);
    for (const log of logs) expect(log.withMessage(unavailable)).toHaveLength(2);
  } finally {
    redis.thaw();
  }
  await Promise.all(logs.map((log) => log.waitFor(connected, 2, 30_000)));
  expect((await requests(await newKey(), perMinute + 1)).statuses).toEqual([
    200, 200, 200, 200, 429,
  ]);
}, 60_000);

it('keeps serving when Redis dies, then shares again once it is back', async () => {
  await redis.stop();
  const { statuses, slowestMs } = await requests(await newKey(), 6);
  expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
  expect(slowestMs).toBeLessThan(1000);
  for (const log of logs) await log.waitFor(unavailable, 3);

  // A new Redis: no counts from before. How soon the clients are back is the client's backoff and
  // the machine's load (a loaded CI run took over 10 s): what matters is that they come back.
  await redis.start();
  await Promise.all(logs.map((log) => log.waitFor(connected, 3, 30_000)));
  expect((await requests(await newKey(), perMinute + 1)).statuses).toEqual([
    200, 200, 200, 200, 429,
  ]);
}, 60_000);
