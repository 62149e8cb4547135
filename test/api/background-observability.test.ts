/**
 * The background work's metrics and log lines, against the running service and a real receiver:
 * webhook attempts by outcome with one log line each (never the body, the secret or the URL's
 * query), attempts in flight, due and overdue, the delay to a 2xx, endpoints disabled; events
 * waiting for a number, the numbering lag, the lease held, lost and gained again; long polls
 * waiting and kept out of the request latency; the start-up warning when the guard is off.
 * (The dashboard and the alert rules over these metrics: dashboard-and-alerts.test.ts.)
 */
import type { components } from '../../generated/api';
import { toDbTimestamp } from '../../src/db/timestamps';
import { plannedAttempt } from '../../src/webhooks/webhook-deliveries-repository';
import { capturedLog } from '../support/captured-log';
import { scrapeMetrics, scrapeUntil, type Scrape } from '../support/metrics-scrape';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { startTestService, type TestService } from '../support/test-service';

type Event = components['schemas']['Event'];

const log = capturedLog();
let api: TestService;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [api, receiver] = await Promise.all([
    startTestService({
      config: {
        logLevel: 'info',
        webhookAllowPrivateTargets: true,
        webhookTimeoutSeconds: 2,
        webhookRetryScheduleMs: [600_000],
      },
      logDestination: log.stream,
    }),
    startReceiver((request) => {
      if (request.path.startsWith('/ok')) return { status: 204 };
      if (request.path === '/fail') return { status: 500 };
      if (request.path === '/gone') return { status: 410 };
      return 'hang';
    }),
  ]);
});
afterAll(async () => {
  await api.stop();
  await receiver.stop();
});

const json = { 'Content-Type': 'application/json' };
const at = (scrape: Scrape, series: string) => scrape.value(series) ?? Number.NaN;
const outcome = (scrape: Scrape, name: string) =>
  at(scrape, `webhook_deliveries_total{outcome="${name}"}`);

async function register(key: string, url: string) {
  const created = await api.send('POST', '/v1/webhook-endpoints', {
    key,
    headers: json,
    body: JSON.stringify({ url }),
  });
  expect(created.status).toBe(201);
  return created.json as components['schemas']['WebhookEndpointWithSecret'];
}

async function createProject(key: string, name: string) {
  const created = await api.send('POST', '/v1/projects', {
    key,
    headers: json,
    body: JSON.stringify({ name }),
  });
  expect(created.status).toBe(201);
  return created.json as components['schemas']['Project'];
}

async function feed(key: string, count: number): Promise<Event[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const events: Event[] = (await api.send('GET', '/v1/events?limit=200', { key })).json.data;
    if (events.length >= count) return events;
    if (Date.now() > deadline)
      throw new Error(`the feed holds ${events.length} of ${count} events`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it('warns at start that the SSRF guard is off', () => {
  const warnings = log.lines.filter(
    (line) =>
      line.level === 40 && String(line.msg).startsWith('WEBHOOK_ALLOW_PRIVATE_TARGETS=true'),
  );
  expect(warnings).toHaveLength(1);
  expect(warnings[0].msg).toContain('the SSRF guard is off');
});

describe('webhook deliveries', () => {
  it('counts attempts by outcome, in flight and due, the delay to a 2xx and endpoints disabled, with one log line per attempt', async () => {
    const key = await api.createKey('deliveries');
    const ok = await register(key, `${receiver.origin}/ok?token=query-secret-123`);
    const fail = await register(key, `${receiver.origin}/fail`);
    const gone = await register(key, `${receiver.origin}/gone`);
    const hang = await register(key, `${receiver.origin}/hang`);
    const before = await scrapeMetrics(api.baseUrl);
    expect(at(before, 'webhook_attempts_in_flight')).toBe(0);
    await createProject(key, 'secret-body-text');
    await receiver.waitFor(1, { path: '/hang' });
    // The hanging attempt is in flight, and due until its outcome is written.
    const during = await scrapeUntil(
      api.baseUrl,
      (s) => at(s, 'webhook_attempts_in_flight') >= 1 && at(s, 'webhook_attempts_due') >= 1,
    );
    expect(at(during, 'webhook_attempts_overdue')).toBe(0);
    await log.waitFor('webhook delivery attempt', 4);
    const after = await scrapeUntil(
      api.baseUrl,
      (s) =>
        outcome(s, 'timed_out') === outcome(before, 'timed_out') + 1 &&
        at(s, 'webhook_attempts_in_flight') === 0,
    );
    expect(outcome(after, 'delivered') - outcome(before, 'delivered')).toBe(1);
    expect(outcome(after, 'failed') - outcome(before, 'failed')).toBe(2);
    expect(outcome(after, 'refused') - outcome(before, 'refused')).toBe(0);
    expect(
      at(after, 'webhook_delivery_delay_seconds_count') -
        at(before, 'webhook_delivery_delay_seconds_count'),
    ).toBe(1);
    expect(at(after, 'webhook_delivery_delay_seconds_sum')).toBeLessThan(10);
    expect(
      at(after, 'webhook_endpoints_disabled_total{reason="gone"}') -
        at(before, 'webhook_endpoints_disabled_total{reason="gone"}'),
    ).toBe(1);
    expect(at(after, 'webhook_endpoints_disabled_total{reason="failing"}')).toBe(
      at(before, 'webhook_endpoints_disabled_total{reason="failing"}'),
    );
    // The failed ones' retries are ten minutes away: nothing is due now.
    expect(
      at(
        await scrapeUntil(api.baseUrl, (s) => at(s, 'webhook_attempts_due') === 0),
        'webhook_attempts_overdue',
      ),
    ).toBe(0);

    const [event] = await feed(key, 1);
    const attempts = log.withMessage('webhook delivery attempt');
    expect(attempts.filter((line) => line.event_id === event.event_id)).toHaveLength(4);
    const lineOf = (endpointId: string) =>
      attempts.find((line) => line.webhook_endpoint_id === endpointId)!;
    const common = {
      event_id: event.event_id,
      attempt: 1,
      target: receiver.origin,
      duration_ms: expect.any(Number),
      delivery_id: expect.any(String),
    };
    expect(lineOf(ok.webhook_endpoint_id)).toMatchObject({
      ...common,
      outcome: 'delivered',
      status: 204,
      error: null,
    });
    expect(lineOf(fail.webhook_endpoint_id)).toMatchObject({
      ...common,
      outcome: 'failed',
      status: 500,
      error: null,
    });
    expect(lineOf(gone.webhook_endpoint_id)).toMatchObject({
      ...common,
      outcome: 'failed',
      status: 410,
    });
    expect(lineOf(hang.webhook_endpoint_id)).toMatchObject({
      ...common,
      outcome: 'timed_out',
      status: null,
      error: 'timeout',
    });
    expect(log.withMessage('webhook endpoint disabled')).toEqual([
      expect.objectContaining({
        level: 40,
        webhook_endpoint_id: gone.webhook_endpoint_id,
        reason: 'gone',
      }),
    ]);
    const everything = JSON.stringify(log.lines);
    for (const secret of [
      'secret-body-text',
      'query-secret-123',
      '/ok',
      ok.secret,
      ok.secret.slice(6),
      fail.secret,
      key,
    ])
      expect(everything).not.toContain(secret);
  });

  it('counts attempts overdue: due for over a minute while no instance makes them', async () => {
    const key = await api.createKey('overdue');
    const endpoint = await register(key, `${receiver.origin}/ok-overdue`);
    await createProject(key, 'p');
    await receiver.waitFor(1, { path: '/ok-overdue' });
    const [event] = await feed(key, 1);
    // Until its outcome is written, the attempt made counts as due (not yet written back).
    const attempts = () =>
      api.service
        .knex('webhook_deliveries')
        .where({ webhook_endpoint_id: endpoint.webhook_endpoint_id, status: 'succeeded' });
    for (let waited = 0; (await attempts()).length === 0; waited += 20) {
      if (waited > 10_000) throw new Error('the first delivery was not written back within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const before = await scrapeUntil(api.baseUrl, (s) => at(s, 'webhook_attempts_in_flight') === 0);
    // Another instance holds the endpoint's lease and has stopped making its attempts.
    const serving = () =>
      api.service.knex('leases').where('name', `webhook-serving:${endpoint.webhook_endpoint_id}`);
    await serving().update({
      holder: 'a-stuck-instance',
      expires_at: toDbTimestamp(new Date(Date.now() + 3_600_000).toISOString()),
    });
    const twoMinutesAgo = toDbTimestamp(new Date(Date.now() - 120_000).toISOString());
    await api.service
      .knex('webhook_deliveries')
      .insert(plannedAttempt(endpoint.webhook_endpoint_id, event, 1, twoMinutesAgo, twoMinutesAgo));
    const stuck = await scrapeMetrics(api.baseUrl);
    expect(at(stuck, 'webhook_attempts_overdue') - at(before, 'webhook_attempts_overdue')).toBe(1);
    expect(at(stuck, 'webhook_attempts_due') - at(before, 'webhook_attempts_due')).toBe(1);
    // The stuck instance's time runs out: this one takes the endpoint over and makes the attempt.
    await serving().update({
      expires_at: toDbTimestamp(new Date(Date.now() - 3_600_000).toISOString()),
    });
    await receiver.waitFor(2, { path: '/ok-overdue' });
    await scrapeUntil(
      api.baseUrl,
      (s) => at(s, 'webhook_attempts_overdue') === at(before, 'webhook_attempts_overdue'),
    );
  });
});

describe('event numbering', () => {
  const lease = () => api.service.knex('leases').where('name', 'event-numbering');
  const held = (scrape: Scrape) => at(scrape, 'event_numbering_lease_held');
  const changes = (scrape: Scrape, change: string) =>
    at(scrape, `event_numbering_lease_changes_total{change="${change}"}`);

  it('shows the lease held, the lag of each event numbered, and events waiting while no instance numbers; logs the lease lost and gained', async () => {
    const key = await api.createKey('numbering');
    const before = await scrapeUntil(api.baseUrl, (s) => held(s) === 1);
    expect(changes(before, 'gained')).toBeGreaterThanOrEqual(1);
    expect(
      log.withMessage('event numbering lease gained: this instance numbers events').length,
    ).toBeGreaterThanOrEqual(1);
    await createProject(key, 'p');
    await feed(key, 1);
    const numbered = await scrapeMetrics(api.baseUrl);
    expect(
      at(numbered, 'event_numbering_lag_seconds_count') -
        at(before, 'event_numbering_lag_seconds_count'),
    ).toBe(1);
    expect(
      at(numbered, 'event_numbering_lag_seconds_sum') -
        at(before, 'event_numbering_lag_seconds_sum'),
    ).toBeLessThan(5);
    expect(at(numbered, 'events_awaiting_number')).toBe(0);

    // Another instance takes the lease and stops numbering.
    await lease().update({
      holder: 'another-instance',
      expires_at: toDbTimestamp(new Date(Date.now() + 3_600_000).toISOString()),
    });
    const lost = await scrapeUntil(api.baseUrl, (s) => held(s) === 0);
    expect(changes(lost, 'lost') - changes(before, 'lost')).toBe(1);
    await log.waitFor('event numbering lease lost: another instance took it over');
    await createProject(key, 'q');
    await createProject(key, 'r');
    const waiting = await scrapeMetrics(api.baseUrl);
    expect(at(waiting, 'events_awaiting_number')).toBe(2);
    expect(at(waiting, 'event_numbering_lag_seconds_count')).toBe(
      at(numbered, 'event_numbering_lag_seconds_count'),
    );

    // Its lease runs out a while later: this instance takes it over and numbers what waited.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await lease().update({ expires_at: toDbTimestamp(new Date(Date.now() - 1000).toISOString()) });
    const regained = await scrapeUntil(
      api.baseUrl,
      (s) => held(s) === 1 && at(s, 'events_awaiting_number') === 0,
    );
    expect(changes(regained, 'gained') - changes(before, 'gained')).toBe(1);
    await feed(key, 3);
    const caughtUp = await scrapeMetrics(api.baseUrl);
    expect(
      at(caughtUp, 'event_numbering_lag_seconds_count') -
        at(numbered, 'event_numbering_lag_seconds_count'),
    ).toBe(2);
    // They waited for the lease, over a quarter of a second each: their lag says so.
    expect(at(caughtUp, 'event_numbering_lag_seconds_bucket{le="0.25"}')).toBe(
      at(numbered, 'event_numbering_lag_seconds_bucket{le="0.25"}'),
    );
  });
});

describe('long polls', () => {
  it('shows the polls waiting, and keeps their answers out of the request latency histogram', async () => {
    const key = await api.createKey('polls');
    const latest = await api.send('GET', '/v1/events?from=latest', { key });
    const before = await scrapeMetrics(api.baseUrl);
    const requests = (s: Scrape) =>
      at(s, 'http_requests_total{operation="listEvents",status="200"}');
    const latencies = (s: Scrape) =>
      at(s, 'http_request_duration_seconds_count{operation="listEvents",status="200"}');
    const polls = (s: Scrape) =>
      s.value('http_long_poll_duration_seconds_count{status="200"}') ?? 0;
    const poll = api.send('GET', `/v1/events?cursor=${latest.json.next_cursor}&wait=20`, { key });
    const waiting = await scrapeUntil(api.baseUrl, (s) => at(s, 'events_long_polls_waiting') === 1);
    expect(polls(waiting)).toBe(polls(before));
    await createProject(key, 'p');
    const answered = await poll;
    expect([answered.status, answered.json.data.length]).toEqual([200, 1]);
    const after = await scrapeUntil(
      api.baseUrl,
      (s) => at(s, 'events_long_polls_waiting') === 0 && polls(s) === polls(before) + 1,
    );
    expect(requests(after) - requests(before)).toBe(1);
    expect(latencies(after)).toBe(latencies(before));
    expect(at(after, 'http_long_poll_duration_seconds_bucket{le="0.01",status="200"}')).toBe(
      before.value('http_long_poll_duration_seconds_bucket{le="0.01",status="200"}') ?? 0,
    );
  });
});
