/**
 * The service killed with SIGKILL while it plans a large fan-out of webhook deliveries (a tenant
 * with 20 endpoints and a batch of events), then started again: the new instance plans what the
 * dead one left, and every event ends with exactly one first attempt per endpoint, none missed
 * and none twice.
 */
import type { Knex } from 'knex';
import { createKnex } from '../../src/db/knex';
import { createRepositories } from '../../src/all-repositories';
import { seedTenant } from '../support/keyed-creates';
import { killHard, serveProcess, type ServiceProcess } from '../support/service-process';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';

const endpoints = 20;
const events = 500;
let database: TestDatabase;
let receiver: WebhookReceiver;
let knex: Knex;
let key: string;
let projectId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ key, projectId } = await seedTenant(database.config));
  receiver = await startReceiver(() => 'hang');
  knex = createKnex(database.config);
});
afterAll(async () => {
  await knex.destroy();
  await receiver.stop();
  await database.drop();
});

const env = { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };

/** The first attempts planned for the tenant's task events. */
const firstAttempts = (
  tenantId: string,
): Promise<Array<{ event_id: string; webhook_endpoint_id: string }>> =>
  knex('webhook_deliveries as d')
    .join('events as e', 'e.event_id', 'd.event_id')
    .where({ 'e.tenant_id': tenantId, 'e.type': 'task.created', 'd.attempt': 1 })
    .select('d.event_id', 'd.webhook_endpoint_id');

it('plans, after a SIGKILL mid-planning, every first attempt the dead instance left, and none twice', async () => {
  const first: ServiceProcess = await serveProcess(database.config, env);
  let second: ServiceProcess | undefined;
  try {
    for (let i = 0; i < endpoints; i++) {
      const response = await fetch(`${first.url}/v1/webhook-endpoints`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ url: `${receiver.origin}/hang/${i}` }),
      });
      expect(response.status).toBe(201);
    }
    // The batch commits at once (written here, beside the service, as another instance would).
    const repositories = createRepositories(knex);
    const { tenant_id: tenantId } = await knex('tenants').first('tenant_id').where('name', 'acme');
    await repositories.inTransaction('batch', async (write) => {
      for (let i = 0; i < events; i++)
        await repositories.tasks.create(tenantId, { project_id: projectId, title: `t${i}` }, write);
    });
    const total = events * endpoints;
    let planned = 0;
    const deadline = Date.now() + 20_000;
    while (planned === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      planned = (await firstAttempts(tenantId)).length;
    }
    await killHard(first.child);
    // Killed with part of the batch planned and the rest not.
    planned = (await firstAttempts(tenantId)).length;
    expect(planned).toBeGreaterThan(0);
    expect(planned).toBeLessThan(total);

    second = await serveProcess(database.config, env);
    let rows = await firstAttempts(tenantId);
    while (rows.length < total && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      rows = await firstAttempts(tenantId);
    }
    expect(rows).toHaveLength(total);
    expect(new Set(rows.map((row) => `${row.event_id} ${row.webhook_endpoint_id}`)).size).toBe(
      total,
    );
    // A little later, still none twice: the batch is planned once, not again.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await firstAttempts(tenantId)).toHaveLength(total);
  } finally {
    await killHard(first.child);
    if (second) await killHard(second.child);
  }
}, 60_000);
