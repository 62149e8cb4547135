/**
 * Planning a large fan-out of webhook deliveries (a tenant with many endpoints and a large batch
 * of events) goes on apart from numbering: another tenant's events are numbered, and its requests
 * answered, while the fan-out is still being planned; and once planned, every event has exactly
 * one first attempt per endpoint.
 */
import type { components } from '../../generated/api';
import { DatabaseUnavailableError } from '../../src/errors';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { startTestService, type TestService } from '../support/test-service';

type Event = components['schemas']['Event'];

const endpoints = 20;
const events = 500;
let api: TestService;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [api, receiver] = await Promise.all([
    startTestService({ config: { webhookAllowPrivateTargets: true } }),
    startReceiver(() => 'hang'),
  ]);
});
afterAll(async () => {
  await api.stop();
  await receiver.stop();
});

const json = { 'Content-Type': 'application/json' };

async function created(key: string, path: string, body: unknown) {
  const response = await api.send('POST', path, { key, headers: json, body: JSON.stringify(body) });
  expect(response.status).toBe(201);
  return response.json;
}

/** The first attempts planned for these events, as (event, endpoint) pairs. */
async function firstAttempts(
  eventIds: string[],
): Promise<Array<{ event_id: string; webhook_endpoint_id: string }>> {
  const rows = [];
  for (let i = 0; i < eventIds.length; i += 100) {
    rows.push(
      ...(await api.service
        .knex('webhook_deliveries')
        .select('event_id', 'webhook_endpoint_id')
        .where('attempt', 1)
        .whereIn('event_id', eventIds.slice(i, i + 100))),
    );
  }
  return rows;
}

it("numbers another tenant's events and answers its requests while a large fan-out is planned, and plans each event once per endpoint", async () => {
  const fanKey = await api.createKey('fan-out');
  const fanProject = await created(fanKey, '/v1/projects', { name: 'fan-out' });
  for (let i = 0; i < endpoints; i++)
    await created(fanKey, '/v1/webhook-endpoints', { url: `${receiver.origin}/hang/${i}` });
  const otherKey = await api.createKey('bystander');
  const otherProject = await created(otherKey, '/v1/projects', { name: 'bystander' });
  const otherTask = await created(otherKey, '/v1/tasks', {
    project_id: otherProject.project_id,
    title: 'read me',
  });

  // The batch commits at once, as many requests' changes committing close together do.
  const { tenant_id: fanTenant } = await api.service
    .knex('tenants')
    .first('tenant_id')
    .where('name', 'fan-out');
  await api.repositories.inTransaction('fan-out', async (write) => {
    for (let i = 0; i < events; i++)
      await api.repositories.tasks.create(
        fanTenant,
        { project_id: fanProject.project_id, title: `t${i}` },
        write,
      );
  });
  const statuses: number[] = [];
  let reading = true;
  const reader = (async () => {
    while (reading)
      statuses.push(
        (await api.send('GET', `/v1/tasks/${otherTask.task_id}`, { key: otherKey })).status,
      );
  })();
  let plannedWhenNumbered: number;
  const fanEvents: string[] = await api.service
    .knex('events')
    .where({ tenant_id: fanTenant, type: 'task.created' })
    .pluck('event_id');
  try {
    const mine = await created(otherKey, '/v1/tasks', {
      project_id: otherProject.project_id,
      title: 'numbered promptly',
    });
    const seen: Event[] = [];
    for (
      let cursor = '';
      !seen.some(
        (event) => 'task_id' in event.data.object && event.data.object.task_id === mine.task_id,
      );
    ) {
      const page = (
        await api.send('GET', `/v1/events?wait=20${cursor && `&cursor=${cursor}`}`, {
          key: otherKey,
        })
      ).json;
      seen.push(...page.data);
      cursor = page.next_cursor;
    }
    plannedWhenNumbered = (await firstAttempts(fanEvents)).length;
  } finally {
    reading = false;
    await reader;
  }
  expect(fanEvents).toHaveLength(events);

  // The bystander's event was numbered before the fan-out's planning ended: planning holds no
  // numbering back (planned in the numbering transaction, every attempt was there by then).
  expect(plannedWhenNumbered).toBeLessThan(events * endpoints);
  expect(statuses.length).toBeGreaterThan(0);
  expect(statuses.filter((status) => status !== 200)).toEqual([]);

  const deadline = Date.now() + 25_000;
  let planned = await firstAttempts(fanEvents);
  while (planned.length < events * endpoints && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    planned = await firstAttempts(fanEvents);
  }
  expect(planned).toHaveLength(events * endpoints);
  expect(new Set(planned.map((row) => `${row.event_id} ${row.webhook_endpoint_id}`)).size).toBe(
    events * endpoints,
  );
}, 45_000);

it('plans each event once per endpoint when several plannings of one tenant run at once', async () => {
  const key = await api.createKey('raced');
  const project = await created(key, '/v1/projects', { name: 'raced' });
  for (let i = 0; i < endpoints; i++)
    await created(key, '/v1/webhook-endpoints', { url: `${receiver.origin}/hang/raced/${i}` });
  const { tenant_id: tenantId } = await api.service
    .knex('tenants')
    .first('tenant_id')
    .where('name', 'raced');
  const batch = 200;
  await api.repositories.inTransaction('raced', async (write) => {
    for (let i = 0; i < batch; i++)
      await api.repositories.tasks.create(
        tenantId,
        { project_id: project.project_id, title: `t${i}` },
        write,
      );
  });
  const eventIds: string[] = await api.service
    .knex('events')
    .where({ tenant_id: tenantId, type: 'task.created' })
    .pluck('event_id');
  // Two planners beside the service's own, each in small chunks, as instances that each believe
  // they hold the numbering lease would; on MySQL their transactions run side by side. One that
  // keeps losing gives up (the database is busy) and tries again, as the service's does.
  const planner = async () => {
    for (let caughtUp = false; !caughtUp;) {
      try {
        ({ caughtUp } = await api.repositories.webhookPlanning.planNext(tenantId, 100));
      } catch (error) {
        if (!(error instanceof DatabaseUnavailableError)) throw error;
      }
    }
  };
  const deadline = Date.now() + 10_000;
  while (
    (await api.service.knex('event_sequences').first('last_sequence').where('tenant_id', tenantId))
      ?.last_sequence <
      batch + 1 &&
    Date.now() < deadline
  ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await Promise.all([planner(), planner()]);
  const planned = await firstAttempts(eventIds);
  expect(planned).toHaveLength(batch * endpoints);
  expect(new Set(planned.map((row) => `${row.event_id} ${row.webhook_endpoint_id}`)).size).toBe(
    batch * endpoints,
  );
}, 30_000);
