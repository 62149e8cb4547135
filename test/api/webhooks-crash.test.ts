/**
 * The service killed with SIGKILL while deliveries are planned and in flight (a slow receiver
 * holds ten at a time), then started again: every event of the feed reaches the receiver at
 * least once, each time with its own event_id as webhook-id, signed, with the same body.
 */
import { Webhook } from 'standardwebhooks';
import type { components } from '../../generated/api';
import { seedTenant } from '../support/keyed-creates';
import { killHard, serveProcess, type ServiceProcess } from '../support/service-process';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';

type Event = components['schemas']['Event'];

let database: TestDatabase;
let receiver: WebhookReceiver;
let key: string;
let projectId: string;
/** webhook-ids the receiver has been sent and not yet answered. */
const unanswered = new Set<string>();

beforeAll(async () => {
  database = await createTestDatabase();
  ({ key, projectId } = await seedTenant(database.config));
  // Slow enough that deliveries are in flight whenever the service is killed.
  receiver = await startReceiver((request) => {
    const id = request.headers['webhook-id'] as string;
    unanswered.add(id);
    return new Promise((resolve) =>
      setTimeout(() => {
        unanswered.delete(id);
        resolve({ status: 204 });
      }, 150),
    );
  });
});
afterAll(async () => {
  await receiver.stop();
  await database.drop();
});

const env = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_TIMEOUT_SECONDS: '1',
  WEBHOOK_RETRY_SCHEDULE: '200ms,200ms,200ms,200ms,200ms',
};
const call = (url: string, method: string, path: string, body?: unknown) =>
  fetch(url + path, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function wholeFeed(url: string): Promise<Event[]> {
  const events: Event[] = [];
  let cursor = '';
  for (;;) {
    const page = (await (
      await call(url, 'GET', `/v1/events?limit=200${cursor && `&cursor=${cursor}`}`)
    ).json()) as { data: Event[]; next_cursor: string; has_more: boolean };
    events.push(...page.data);
    cursor = page.next_cursor;
    if (!page.has_more) return events;
  }
}

it('delivers every event at least once, with the same webhook-id, across a SIGKILL mid-delivery', async () => {
  const first: ServiceProcess = await serveProcess(database.config, env);
  let second: ServiceProcess | undefined;
  try {
    const endpoint = (await (
      await call(first.url, 'POST', '/v1/webhook-endpoints', { url: `${receiver.origin}/crash` })
    ).json()) as { secret: string };
    let stopped = false;
    let acknowledged = 0;
    const writer = async () => {
      while (!stopped) {
        try {
          if (
            (
              await call(first.url, 'POST', '/v1/tasks', {
                project_id: projectId,
                title: 'delivered',
              })
            ).status === 201
          )
            acknowledged++;
        } catch {
          // the killed instance: no answer
        }
      }
    };
    const writers = Array.from({ length: 4 }, writer);
    await receiver.waitFor(15, { path: '/crash' });
    // Killed with deliveries in flight: received, not yet answered.
    while (unanswered.size === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const cutOff = [...unanswered];
    await killHard(first.child);
    stopped = true;
    await Promise.all(writers);
    const beforeRestart = receiver.received.length;

    second = await serveProcess(database.config, env);
    // The seeded project's event (before the endpoint: not delivered), and one per acknowledged
    // task at least (a task whose answer the kill cut off may be there too), once the events the
    // killed instance left unnumbered are numbered here (its numbering lease runs out first).
    const deadline = Date.now() + 20_000;
    let events = await wholeFeed(second.url);
    while (events.length < 1 + acknowledged && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      events = await wholeFeed(second.url);
    }
    expect(events.length).toBeGreaterThanOrEqual(1 + acknowledged);
    const ids = new Set(events.slice(1).map((e) => e.event_id));
    expect(ids.size).toBeGreaterThan(beforeRestart);
    const times = (id: string) =>
      receiver.received.filter((r) => r.headers['webhook-id'] === id).length;
    // Every event at least once, and those cut off by the kill once more after their claims ran
    // out (which may be after the restarted instance has sent all the others).
    const missing = () => [
      ...[...ids].filter((id) => times(id) === 0),
      ...cutOff.filter((id) => times(id) < 2),
    ];
    while (missing().length > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(missing()).toEqual([]);

    // The feed read again: an event whose answer the kill cut off may have been numbered, and
    // then delivered, after the first read; an event is delivered only once it is numbered.
    const verifier = new Webhook(endpoint.secret);
    const byId = new Map((await wholeFeed(second.url)).map((e) => [e.event_id, e]));
    for (const request of receiver.received) {
      const event = verifier.verify(
        request.body,
        request.headers as Record<string, string>,
      ) as Event;
      expect(request.headers['webhook-id']).toBe(event.event_id);
      expect(event).toEqual(byId.get(event.event_id));
    }
  } finally {
    await killHard(first.child);
    if (second) await killHard(second.child);
  }
}, 60_000);
