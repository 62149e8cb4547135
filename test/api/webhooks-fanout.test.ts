/**
 * Webhook fan-out is bounded per instance: a tenant whose many endpoints answer slowly, or whose host
 * names take long to resolve, gets no more than the instance's cap (and its share of it), while
 * another tenant's deliveries still arrive promptly and the service keeps answering.
 *
 * The slow name server is a real one the test runs (WEBHOOK_DNS_SERVERS): it answers names under
 * `.slow.test` only after a while, as a tenant's own slow name server would.
 */
import type { Config } from '../../src/config';
import { minKeepMs } from '../../src/webhooks/dns-answers';
import { lookupsPerTenant } from '../../src/webhooks/dns-lookups';
import { startNameServer, type NameServer } from '../support/name-server';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { startTestService, type TestService } from '../support/test-service';

const cap = 8;
const json = { 'Content-Type': 'application/json' };
let healthy: WebhookReceiver;

const slowLookupMs = 1500;
let names: NameServer;

beforeAll(async () => {
  names = await startNameServer();
  healthy = await startReceiver();
});
afterAll(async () => {
  await healthy.stop();
  await names.stop();
});

/**
 * A service of the test's own, capped at `cap` attempts in flight, each cut off after a second;
 * a tenant may register more endpoints than the default, so that one tenant alone can try for every slot.
 */
async function withService(config: Partial<Config>, test: (api: TestService) => Promise<void>) {
  const api = await startTestService({
    config: {
      webhookAllowPrivateTargets: true,
      webhookTimeoutSeconds: 1,
      webhookMaxInFlight: cap,
      webhookEndpointsPerTenant: 100,
      webhookDnsServers: [names.address],
      ...config,
    },
  });
  try {
    await test(api);
  } finally {
    await api.stop();
  }
}

const register = async (api: TestService, key: string, url: string) => {
  const answer = await api.send('POST', '/v1/webhook-endpoints', {
    key,
    headers: json,
    body: JSON.stringify({ url }),
  });
  expect([answer.status, answer.status === 201 ? '' : answer.text]).toEqual([201, '']);
};
const createProject = async (api: TestService, key: string, name: string, description = '') =>
  expect(
    (
      await api.send('POST', '/v1/projects', {
        key,
        headers: json,
        body: JSON.stringify({ name, description }),
      })
    ).status,
  ).toBe(201);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long the service takes to answer /healthz. */
async function healthzMs(api: TestService): Promise<number> {
  const started = performance.now();
  expect((await fetch(`${api.baseUrl}/healthz`)).status).toBe(200);
  return performance.now() - started;
}

it('keeps a tenant whose 40 endpoints answer slowly within the cap, and delivers another tenant promptly meanwhile', async () => {
  // Each answers 503 after 0.7 s, within the timeout: the tenant's slots grow with each answer
  // (delivery-slots.ts), so its share and the instance's cap are what hold it.
  const slow = await startReceiver(async () => {
    await sleep(700);
    return { status: 503 };
  });
  try {
    await withService({ webhookRetryScheduleMs: [300, 300, 300, 300, 300] }, async (api) => {
      const a = await api.createKey('fanout-slow');
      const b = await api.createKey('fanout-healthy');
      await Promise.all([
        ...Array.from({ length: 40 }, (_, i) => register(api, a, `${slow.origin}/a${i}`)),
        register(api, b, `${healthy.origin}/b`),
      ]);
      // 200 attempts of large events to slow receivers that fail them, retried every 300 ms.
      for (let i = 0; i < 5; i++) await createProject(api, a, `a${i}`, 'x'.repeat(10_000));
      await slow.waitFor(cap - 1, { timeoutMs: 5000 });

      const started = performance.now();
      for (let i = 0; i < 10; i++) await createProject(api, b, `b${i}`);
      const delivered = await healthy.waitFor(10, { path: '/b', timeoutMs: 10_000 });
      // Behind tenant A's 200 attempts, at 8 a second, these would take 25 s.
      expect(Math.max(...delivered.map((r) => r.at)) - started).toBeLessThan(8000);
      expect(await healthzMs(api)).toBeLessThan(1000);
      await sleep(1500);

      // The receiver's own count of requests open at once: never more than the instance's cap,
      // though tenant A had 200 attempts due at 40 endpoints that each allow 10.
      expect(slow.concurrent().most).toBeLessThanOrEqual(cap);
      expect(slow.concurrent().most).toBeGreaterThanOrEqual(cap / 2);
      expect(slow.received.length).toBeGreaterThan(cap);
    });
  } finally {
    await slow.stop();
  }
}, 60_000);

it("makes at most a few of a tenant's host name lookups at once, holding no slot while they run, and delivers another tenant meanwhile", async () => {
  // Twelve registrations of one tenant look their names up a few at a time: on a loaded machine
  // the last may wait past the 2 s default, which would refuse it; 1.5 s lookups stay well within 5 s.
  const config = { webhookRetryScheduleMs: Array(20).fill(300), webhookDnsTimeoutMs: 5000 };
  await withService(config, async (api) => {
    const c = await api.createKey('fanout-slow-names');
    const b = await api.createKey('fanout-healthy');
    const port = new URL(healthy.origin).port;
    // Twelve names, registered while they resolve at once; then each takes 1.5 s, once the answers
    // kept from the registrations (their TTL is 0: kept the least, 5 s) have run out.
    for (let i = 0; i < 12; i++)
      names.names.set(`h${i}.slow.test`, { addresses: ['127.0.0.1'], ttl: 0 });
    await Promise.all([
      ...Array.from({ length: 12 }, (_, i) =>
        register(api, c, `http://h${i}.slow.test:${port}/c${i}`),
      ),
      register(api, b, `${healthy.origin}/b2`),
    ]);
    // Counted from the last registration's lookup, which a loaded machine may make seconds after the first.
    const registered = performance.now();
    for (const record of names.names.values()) record.delayMs = slowLookupMs;
    names.queries.clear();
    await sleep(minKeepMs + 200 - (performance.now() - registered));
    await createProject(api, c, 'c');
    while (names.queries.size < 2) await sleep(20);

    const started = performance.now();
    for (let i = 0; i < 5; i++) await createProject(api, b, `b${i}`);
    const delivered = await healthy.waitFor(5, { path: '/b2', timeoutMs: 10_000 });
    // Tenant C's lookups hold no slot, however long they take.
    expect(Math.max(...delivered.map((r) => r.at)) - started).toBeLessThan(6000);
    expect(await healthzMs(api)).toBeLessThan(1000);

    // A name once resolved is remembered, and a retry reaches the receiver at the address it gave.
    const [reached] = await Promise.race(
      Array.from({ length: 12 }, (_, i) =>
        healthy.waitFor(1, { path: `/c${i}`, timeoutMs: 12_000 }),
      ),
    );
    expect(reached.headers.host).toMatch(new RegExp(`^h\\d+\\.slow\\.test:${port}$`));
    expect(names.queries.size).toBeGreaterThanOrEqual(lookupsPerTenant);
    expect(names.mostLateAtOnce()).toBeLessThanOrEqual(lookupsPerTenant);
  });
}, 60_000);
