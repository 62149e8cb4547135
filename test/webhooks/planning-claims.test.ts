/**
 * Planning that claims what it plans for the delivery worker beside it (planNext with a
 * PlanningClaim): each endpoint's attempts up to its room are written claimed, under the claim and
 * its lease, and handed back ready to make; the rest are planned unclaimed, and named, for a claim.
 * And every event of a chunk is planned once for each endpoint that wants it, whichever slice its
 * data is read in.
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

/** A tenant with `endpoints` enabled endpoints and `events` numbered events, none planned yet. */
async function tenantWith(endpoints: number, events: number) {
  const tenantId = randomUUID();
  const now = nowForDb();
  await knex('tenants').insert({ tenant_id: tenantId, name: tenantId, created_at: now });
  const endpointIds = Array.from({ length: endpoints }, () => uuidv7()).sort();
  await knex('webhook_endpoints').insert(
    endpointIds.map((webhook_endpoint_id, i) => ({
      webhook_endpoint_id,
      tenant_id: tenantId,
      url: `http://127.0.0.1:9/${i}`,
      event_types: null,
      description: '',
      enabled: true,
      secret: `whsec_${Buffer.alloc(32, i + 1).toString('base64')}`,
      created_at: now,
      updated_at: now,
    })),
  );
  const eventIds = Array.from({ length: events }, () => uuidv7());
  await knex('events').insert(
    eventIds.map((event_id, i) => ({
      event_id,
      tenant_id: tenantId,
      sequence: i + 1,
      type: 'task.created',
      project_id: randomUUID(),
      request_id: 'test',
      data: '{}',
      created_at: now,
    })),
  );
  await knex('event_sequences').insert({ tenant_id: tenantId, last_sequence: events });
  return { tenantId, endpointIds, eventIds };
}

it("writes each endpoint's attempts claimed up to its room, hands them over ready to make, and names the endpoints left with attempts to claim", async () => {
  const { tenantId, endpointIds, eventIds } = await tenantWith(3, 5);
  const [roomy, short, none] = endpointIds;
  const claim = randomUUID();
  const before = Date.now();
  const answer = await repositories.webhookPlanning.planNext(tenantId, 500, {
    claim,
    leaseMs: 60_000,
    rooms: new Map([
      [roomy, 10],
      [short, 2],
    ]),
  });
  expect(answer).toMatchObject({ planned: 15, caughtUp: true });
  expect([...answer.endpointIds].sort()).toEqual([short, none].sort());

  const rows: Array<{
    delivery_id: string;
    webhook_endpoint_id: string;
    event_id: string;
    claimed_by: string | null;
    lease_until: string | null;
  }> = await knex('webhook_deliveries')
    .select('delivery_id', 'webhook_endpoint_id', 'event_id', 'claimed_by', 'lease_until')
    .whereIn('webhook_endpoint_id', endpointIds);
  const claimedOf = (endpointId: string) =>
    rows.filter((row) => row.webhook_endpoint_id === endpointId && row.claimed_by === claim);
  expect([claimedOf(roomy).length, claimedOf(short).length, claimedOf(none).length]).toEqual([
    5, 2, 0,
  ]);
  expect(rows.filter((row) => row.claimed_by === null)).toHaveLength(8);
  // The lease written is the one the worker believes, or later: it never makes an attempt past it.
  for (const row of [...claimedOf(roomy), ...claimedOf(short)])
    expect(new Date(`${row.lease_until!.replace(' ', 'T')}Z`).getTime()).toBeGreaterThanOrEqual(
      before + 60_000,
    );

  // Handed over as a claim reads them: the attempt, its endpoint's address and signing secret.
  expect(answer.claimed.map((d) => d.deliveryId).sort()).toEqual(
    [...claimedOf(roomy), ...claimedOf(short)].map((row) => row.delivery_id).sort(),
  );
  const first = answer.claimed.find((d) => d.endpointId === short)!;
  expect(first).toMatchObject({
    claim,
    tenantId,
    url: 'http://127.0.0.1:9/1',
    secrets: [`whsec_${Buffer.alloc(32, 2).toString('base64')}`],
    endpointFailing: false,
    eventType: 'task.created',
    attempt: 1,
  });
  expect(eventIds).toContain(first.eventId);
  for (const delivery of answer.claimed)
    expect(delivery.leaseUntil).toBeLessThanOrEqual(
      new Date(
        `${rows.find((row) => row.delivery_id === delivery.deliveryId)!.lease_until!.replace(' ', 'T')}Z`,
      ).getTime(),
    );

  // What was left unclaimed is claimed as any planned attempt is; what was claimed is not again.
  const claimedLater = await repositories.deliveryQueue.claim(
    new Map([
      [short, 10],
      [roomy, 10],
    ]),
    randomUUID(),
    randomUUID(),
    { leaseMs: 60_000, endpointLeaseMs: 5000, graceMs: 1000 },
  );
  expect(claimedLater.get(short)!.deliveries).toHaveLength(3);
  expect(claimedLater.get(roomy)!.deliveries).toHaveLength(0);
});

it('claims nothing without a PlanningClaim, and names every endpoint it planned for', async () => {
  const { tenantId, endpointIds } = await tenantWith(2, 3);
  const answer = await repositories.webhookPlanning.planNext(tenantId, 500);
  expect(answer).toMatchObject({ planned: 6, claimed: [], caughtUp: true });
  expect([...answer.endpointIds].sort()).toEqual(endpointIds);
  expect(
    await knex('webhook_deliveries')
      .whereIn('webhook_endpoint_id', endpointIds)
      .whereNotNull('claimed_by')
      .count({ n: '*' }),
  ).toEqual([{ n: 0 }]);
});

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
