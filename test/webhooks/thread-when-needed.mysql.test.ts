/**
 * On MySQL the delivery thread starts only once some endpoint is enabled. Until then planning
 * still runs, so an endpoint registered later is sent only the events that come after it; an
 * instance that registers nothing starts its thread once another instance has registered one.
 */
import { startService, type RunningService } from '../../src/server';
import { capturedLog } from '../support/captured-log';
import { seedTenant } from '../support/keyed-creates';
import { testConfig } from '../support/test-config';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';

const started = 'a webhook endpoint is enabled: starting the webhook delivery thread';

let database: TestDatabase;
let key: string;
let projectId: string;
let receiver: WebhookReceiver;
const services: RunningService[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  ({ key, projectId } = await seedTenant(database.config));
  receiver = await startReceiver();
});
afterAll(async () => {
  await Promise.all(services.map((service) => service.stop()));
  await Promise.all([receiver.stop(), database.drop()]);
});

const startInstance = async () => {
  const log = capturedLog();
  const config = testConfig(database.config, {
    webhookAllowPrivateTargets: true,
    logLevel: 'info',
  });
  const service = await startService(config, { logDestination: log.stream });
  services.push(service);
  return { service, log };
};

const call = (service: RunningService, path: string, body: unknown) =>
  fetch(service.url + path, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

const createTask = async (service: RunningService, title: string) => {
  const response = await call(service, '/v1/tasks', { project_id: projectId, title });
  expect(response.status).toBe(201);
  return ((await response.json()) as { task_id: string }).task_id;
};

/** The tenant's events are all numbered and planned (the planning mark has reached the last sequence). */
const allPlanned = async (service: RunningService) => {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const counter = await service.knex('event_sequences').first('tenant_id', 'last_sequence');
    const mark = counter
      ? await service
          .knex('webhook_planning')
          .first('planned_sequence')
          .where('tenant_id', counter.tenant_id)
      : undefined;
    const unnumbered = await service.knex('events').whereNull('sequence').first('event_id');
    if (
      counter &&
      mark &&
      Number(mark.planned_sequence) === Number(counter.last_sequence) &&
      !unnumbered
    )
      return;
    if (Date.now() > deadline) throw new Error('the events were not all planned within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

it('plans without a thread until an endpoint is enabled, then delivers only what follows it, from every instance', async () => {
  const a = await startInstance();
  const b = await startInstance();
  for (let i = 0; i < 5; i++) await createTask(i % 2 ? a.service : b.service, `before ${i}`);
  await allPlanned(a.service);
  // Two lookups for enabled endpoints later, neither instance has started its thread.
  await new Promise((resolve) => setTimeout(resolve, 2200));
  expect([...a.log.withMessage(started), ...b.log.withMessage(started)]).toEqual([]);
  expect(await a.service.knex('webhook_deliveries').count({ n: '*' })).toEqual([{ n: 0 }]);

  expect(
    (await call(a.service, '/v1/webhook-endpoints', { url: `${receiver.origin}/hook` })).status,
  ).toBe(201);
  // Each instance finds the endpoint within a look or two (the one that registered it too: the
  // address needs no lookup).
  await Promise.all([a.log.waitFor(started, 1, 10_000), b.log.waitFor(started, 1, 10_000)]);

  const after = [await createTask(a.service, 'after a'), await createTask(b.service, 'after b')];
  const received = await receiver.waitFor(2, { timeoutMs: 10_000 });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const delivered = receiver.received.map((request) => {
    const body = JSON.parse(request.body) as {
      type: string;
      data: { object: { task_id: string } };
    };
    return [body.type, body.data.object.task_id];
  });
  expect(received).toHaveLength(2);
  expect(delivered.sort()).toEqual(after.map((taskId) => ['task.created', taskId]).sort());
}, 60_000);
