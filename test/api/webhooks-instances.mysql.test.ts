/**
 * Two service instances on one MariaDB database deliver webhooks together: under 200 concurrent
 * changes through both, each endpoint gets every event exactly once (no attempt made twice), and
 * a slow endpoint never has more than 10 deliveries in flight over both instances.
 */
import { startService, type RunningService } from '../../src/server';
import { seedTenant } from '../support/keyed-creates';
import { testConfig } from '../support/test-config';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';

let database: TestDatabase;
let key: string;
let projectId: string;
let a: RunningService;
let b: RunningService;
let fast: WebhookReceiver;
let slow: WebhookReceiver;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ key, projectId } = await seedTenant(database.config));
  const config = testConfig(database.config, {
    webhookAllowPrivateTargets: true,
    webhookTimeoutSeconds: 5,
  });
  [a, b, fast, slow] = await Promise.all([
    startService(config),
    startService(config),
    startReceiver(),
    startReceiver(() => new Promise((resolve) => setTimeout(() => resolve({ status: 200 }), 100))),
  ]);
});
afterAll(async () => {
  await Promise.all([a.stop(), b.stop()]);
  await Promise.all([fast.stop(), slow.stop(), database.drop()]);
});

const call = (url: string, method: string, path: string, body?: unknown) =>
  fetch(url + path, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

it('shares deliveries between two instances with no attempt made twice and at most 10 in flight per endpoint', async () => {
  for (const receiver of [fast, slow])
    expect(
      (await call(a.url, 'POST', '/v1/webhook-endpoints', { url: `${receiver.origin}/hook` }))
        .status,
    ).toBe(201);
  const statuses = await Promise.all(
    Array.from(
      { length: 200 },
      async (_, i) =>
        (
          await call(i % 2 ? a.url : b.url, 'POST', '/v1/tasks', {
            project_id: projectId,
            title: `t${i}`,
          })
        ).status,
    ),
  );
  expect(statuses.filter((s) => s !== 201)).toEqual([]);
  const [toFast, toSlow] = await Promise.all([
    fast.waitFor(200, { timeoutMs: 20_000 }),
    slow.waitFor(200, { timeoutMs: 20_000 }),
  ]);
  // The last outcomes are written just after their answers.
  const deadline = Date.now() + 5000;
  while (
    (await a.knex('webhook_deliveries').whereNot('status', 'succeeded').first()) &&
    Date.now() < deadline
  )
    await new Promise((resolve) => setTimeout(resolve, 100));
  await new Promise((resolve) => setTimeout(resolve, 500));
  for (const received of [toFast, toSlow]) {
    const ids = received.map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(200);
    expect(new Set(ids).size).toBe(200);
  }
  expect(slow.concurrent().most).toBe(10);
  const attempts: Array<{ status: string; n: number | string }> = await a
    .knex('webhook_deliveries')
    .select('status')
    .count({ n: '*' })
    .groupBy('status');
  expect(attempts.map((row) => [row.status, Number(row.n)])).toEqual([['succeeded', 400]]);
}, 60_000);
