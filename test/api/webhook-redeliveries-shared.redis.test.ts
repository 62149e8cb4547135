/**
 * Two instances sharing counts in the local Redis: together they hold an endpoint to 60
 * redeliveries a minute.
 */
import { shareKey, startTestService, type TestService } from '../support/test-service';

const redisUrl = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
// A Redis that is slow to answer on a loaded machine sends an instance to count in its own memory,
// which this test is not about: it waits for Redis as long as the test would.
const config = {
  redisUrl,
  redisTimeoutMs: 5000,
  webhookAllowPrivateTargets: true,
  webhookRetryScheduleMs: [60_000],
};
let first: TestService;
let second: TestService;

beforeAll(async () => {
  [first, second] = await Promise.all([startTestService({ config }), startTestService({ config })]);
});
afterAll(async () => {
  await Promise.all([first.stop(), second.stop()]);
});

const json = { 'Content-Type': 'application/json' };

it('counts the redeliveries of one endpoint across instances', async () => {
  // The instances have databases of their own; the key exists in both, as if they shared one.
  const key = await first.createKey('redeliveries-shared');
  await shareKey(first, second, key);
  // Nothing listens there: the first attempt fails, and its retry waits a minute.
  const registered = await first.send('POST', '/v1/webhook-endpoints', {
    key,
    headers: json,
    body: JSON.stringify({ url: 'http://127.0.0.1:1029/hook' }),
  });
  expect(registered.status).toBe(201);
  expect(
    (await first.send('POST', '/v1/projects', { key, headers: json, body: '{"name": "p"}' }))
      .status,
  ).toBe(201);
  let eventId: string | undefined;
  for (const deadline = Date.now() + 5000; eventId === undefined && Date.now() < deadline;) {
    eventId = (await first.send('GET', '/v1/events', { key })).json.data[0]?.event_id;
    if (eventId === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const path = `/v1/webhook-endpoints/${registered.json.webhook_endpoint_id}/deliveries`;
  const redeliver = (instance: TestService) =>
    instance.send('POST', path, {
      key,
      headers: json,
      body: JSON.stringify({ event_id: eventId }),
    });
  const statuses: number[] = [];
  // The second instance's database has no such endpoint (404), but each request counts, as every redelivery asked for does.
  for (let i = 0; i < 60; i++)
    statuses.push((await redeliver(i % 2 === 0 ? first : second)).status);
  expect(statuses).toEqual(Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? 202 : 404)));
  const refused = await redeliver(first);
  expect([refused.status, refused.json.type]).toEqual([429, '/problems/rate-limited']);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
});
