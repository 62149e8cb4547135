/**
 * Planning reads a chunk's events with their data a slice at a time when a subscription looks at
 * them: every event of the chunk is planned once for each endpoint that wants it, whichever slice
 * it falls in, on both sides of each slice's edge.
 */
import type { Knex } from 'knex';
import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { createRepositories, type Repositories } from '../../src/all-repositories';
import { nowForDb } from '../../src/db/timestamps';
import { createMigratedDatabase } from '../support/test-database';

let database: Awaited<ReturnType<typeof createMigratedDatabase>>;
let knex: Knex;
let repositories: Repositories;

beforeAll(async () => {
  database = await createMigratedDatabase();
  knex = database.knex;
  repositories = createRepositories(knex);
});
afterAll(() => database.close());

it('plans every event of a chunk of 250 once for each endpoint that wants it, across the slices its data is read in', async () => {
  const tenantId = randomUUID();
  const now = nowForDb();
  await knex('tenants').insert({ tenant_id: tenantId, name: tenantId, created_at: now });
  const endpoint = (filter: unknown) => ({
    webhook_endpoint_id: uuidv7(),
    tenant_id: tenantId,
    url: 'http://127.0.0.1:9/',
    event_types: null,
    task_filter: filter === undefined ? null : JSON.stringify(filter),
    description: '',
    enabled: true,
    secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
    created_at: now,
    updated_at: now,
  });
  const filtered = endpoint({ labels: { has: 'ops' } });
  const everything = endpoint(undefined);
  await knex('webhook_endpoints').insert([filtered, everything]);
  const events = Array.from({ length: 250 }, (_, i) => ({
    event_id: uuidv7(),
    tenant_id: tenantId,
    sequence: i + 1,
    type: 'task.created',
    project_id: randomUUID(),
    request_id: 'test',
    // Around each slice's edge (100, 200) and here and there elsewhere.
    data: JSON.stringify({
      object: {
        labels: [99, 100, 101, 200, 201].includes(i + 1) || i % 7 === 0 ? ['ops'] : ['dev'],
      },
    }),
    created_at: now,
  }));
  await knex('events').insert(events);
  await knex('event_sequences').insert({ tenant_id: tenantId, last_sequence: events.length });

  const answer = await repositories.webhookPlanning.planNext(tenantId, 1000);
  expect(answer.caughtUp).toBe(true);
  const plannedFor = async (endpointId: string) =>
    (
      await knex('webhook_deliveries').where('webhook_endpoint_id', endpointId).pluck('event_id')
    ).sort();
  const wanted = events.filter((event) => event.data.includes('"ops"'));
  expect(wanted.length).toBe(40);
  expect(await plannedFor(filtered.webhook_endpoint_id)).toEqual(
    wanted.map((event) => event.event_id).sort(),
  );
  expect(await plannedFor(everything.webhook_endpoint_id)).toEqual(
    events.map((event) => event.event_id).sort(),
  );
  expect(answer.planned).toBe(wanted.length + events.length);
});
