/**
 * The webhook delivery worker's side of `webhook_deliveries`: which endpoints have attempts due,
 * claims of those attempts, claims given back, and their outcomes (written by
 * delivery-outcomes.ts). An instance holds an endpoint's lease (endpoint-leases.ts) before it claims the
 * endpoint's due attempts with conditional updates and a lease (claimed_by, lease_until); it makes
 * them outside any transaction and writes each outcome back under its claim. No row locks are
 * relied on, so the claims hold on a cluster where one node's locks do not block another's.
 *
 * Every write here runs READ COMMITTED and names its rows by primary key: it locks only the rows
 * it changes, never a range or a gap of an index. On Galera a write set applied from another node
 * aborts any local transaction holding a lock it needs; under REPEATABLE READ a claim's update
 * over an endpoint's due attempts held next-key locks on every pending attempt of the endpoint
 * and the gap after them, so the attempts planned for new events and the outcomes written through
 * another node aborted it (behind HAProxy, one instance's writes go to every node).
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/api';
import { affectedRows, selectedRows } from '../db/raw-answers';
import { translatingErrors } from '../db/database-errors';
import { deliveryOutcomes } from './delivery-outcomes';
import { endpointLeases } from './endpoint-leases';
import { eventJson, numbered, type EventRow } from '../db/event-log';
import { fromDbTimestamp, nowForDb, toDbTimestamp, type DbTimestamp } from '../db/timestamps';
import { inTransaction } from '../db/transactions';
import type { ClaimedDelivery, DueEndpoint, EventToSend } from './queue-items';
import { signingSecrets } from './webhook-secrets';
import { notPaused } from './tenant-pauses';

export type {
  ClaimedDelivery,
  DeliveryOutcome,
  DeliverySuccess,
  DisabledReason,
  DueEndpoint,
  EndpointHealthChange,
  EventToSend,
} from './queue-items';

type EventType = components['schemas']['EventType'];

export type DeliveryQueueRepository = ReturnType<typeof deliveryQueueRepository>;

const readCommitted = { readCommitted: true };

/** Attempts that are due and claimed by no one (or by a claim whose lease ran out). */
const due = (q: Knex.QueryBuilder, now: DbTimestamp) =>
  q
    .where('webhook_deliveries.status', 'pending')
    .where('webhook_deliveries.next_attempt_at', '<=', now)
    .where((w) =>
      w
        .whereNull('webhook_deliveries.lease_until')
        .orWhere('webhook_deliveries.lease_until', '<', now),
    );

/** What a claim reads of an attempt and its endpoint. */
export interface ClaimRow {
  delivery_id: string;
  webhook_endpoint_id: string;
  event_id: string;
  event_type: EventType;
  attempt: number;
  url: string;
  tenant_id: string;
  secret: string;
  retired_secrets: string | null;
  previous_secret: string | null;
  previous_secret_until: DbTimestamp | null;
  failing_since: DbTimestamp | null;
  api_version: string;
}

export function toClaimed(
  row: ClaimRow,
  claim: string,
  leaseUntil: number,
  now: DbTimestamp,
): ClaimedDelivery {
  return {
    deliveryId: row.delivery_id,
    claim,
    leaseUntil,
    endpointId: row.webhook_endpoint_id,
    tenantId: row.tenant_id,
    url: row.url,
    secrets: signingSecrets(row, now),
    endpointFailing: row.failing_since !== null,
    eventId: row.event_id,
    eventType: row.event_type,
    attempt: Number(row.attempt),
    apiVersion: row.api_version,
  };
}

export function deliveryQueueRepository(knex: Knex) {
  const leases = endpointLeases(knex);
  const outcomes = deliveryOutcomes(knex);

  /** The due attempts of an endpoint still enabled, first due first, with what their claim reads of the endpoint. */
  const dueOf = (endpointId: string, wanted: number, now: DbTimestamp) =>
    knex('webhook_deliveries')
      .where('webhook_deliveries.webhook_endpoint_id', endpointId)
      .modify(due, now)
      .join(
        'webhook_endpoints as w',
        'w.webhook_endpoint_id',
        'webhook_deliveries.webhook_endpoint_id',
      )
      .where('w.enabled', true)
      .select(
        'webhook_deliveries.delivery_id',
        'webhook_deliveries.webhook_endpoint_id',
        'webhook_deliveries.event_id',
        'webhook_deliveries.event_type',
        'webhook_deliveries.attempt',
        'w.url',
        'w.tenant_id',
        'w.secret',
        'w.retired_secrets',
        'w.previous_secret',
        'w.previous_secret_until',
        'w.failing_since',
        'w.api_version',
      )
      .orderBy([
        { column: 'webhook_deliveries.next_attempt_at' },
        { column: 'webhook_deliveries.delivery_id' },
      ])
      .limit(wanted);

  /**
   * Takes up to `wanted` of each endpoint's due attempts under `claim` until `leaseUntil`: one
   * plain read that locks nothing (each endpoint's first due attempts, a UNION ALL of one indexed
   * read each), then a conditional update of only the rows it read, in a transaction that writes
   * attempts only. The endpoints' rows are the parents of every attempt planned for them (a
   * foreign key), so a claim that wrote them would hold the lock every insert of a planned attempt
   * checks, and on Galera each one applied meanwhile would abort the claim, or the claim applied
   * would abort the planning.
   */
  const takeDue = async (
    wanted: Map<string, number>,
    claim: string,
    leaseMs: number,
  ): Promise<ClaimedDelivery[]> => {
    // Taken before the lease is written, so the claim believes it runs out a little early, never late.
    const leaseUntil = Date.now() + leaseMs;
    const now = nowForDb();
    // Each read in a derived table of its own: SQLite takes no LIMIT on a bare member of a UNION,
    // nor parentheses around one (knex's unionAll writes those).
    const reads = [...wanted].map(([endpointId, count]) => dueOf(endpointId, count, now).toSQL());
    const read = {
      sql: reads.map((one, i) => `select * from (${one.sql}) as due${i}`).join(' union all '),
      bindings: reads.flatMap((one) => one.bindings),
    };
    let claimed = 0;
    const rows = await inTransaction(
      knex,
      'webhook-claim',
      async ({ trx }) => {
        claimed = 0;
        const found = selectedRows<ClaimRow>(await trx.raw(read.sql, read.bindings));
        if (found.length === 0) return found;
        // Sent with the COMMIT, in one round trip; its answer says how many it took.
        await trx.later({
          ...knex('webhook_deliveries')
            .whereIn(
              'webhook_deliveries.delivery_id',
              found.map((row) => row.delivery_id),
            )
            .modify(due, now)
            .update({
              claimed_by: claim,
              lease_until: toDbTimestamp(new Date(Date.now() + leaseMs).toISOString()),
            })
            .toSQL(),
          answerMeans: (answer) => void (claimed = affectedRows(answer)),
        });
        return found;
      },
      readCommitted,
    );
    // Another claim took some meanwhile (a lease ran out under it): keep only this claim's.
    const ours =
      claimed === rows.length
        ? undefined
        : new Set<string>(
            await knex('webhook_deliveries')
              .whereIn(
                'delivery_id',
                rows.map((row) => row.delivery_id),
              )
              .where('claimed_by', claim)
              .pluck('delivery_id'),
          );
    return rows
      .filter((row) => ours === undefined || ours.has(row.delivery_id))
      .map((row) => toClaimed(row, claim, leaseUntil, now));
  };

  return translatingErrors({
    /**
     * The enabled endpoints (of tenants not paused) that have an attempt due and unclaimed, and whose lease `holder` has or
     * may take (no one's, or a holder's that ran out more than `graceMs` ago): one probe of an
     * index each, then their leases.
     */
    async endpointsWithDueAttempts(holder: string, graceMs: number): Promise<DueEndpoint[]> {
      const now = nowForDb();
      const rows: Array<{ webhook_endpoint_id: string; tenant_id: string }> = await knex(
        'webhook_endpoints as e',
      )
        .where('e.enabled', true)
        .modify(notPaused('e.tenant_id'))
        .whereExists((q) => {
          q.select(knex.raw('1'))
            .from('webhook_deliveries')
            .whereRaw('webhook_deliveries.webhook_endpoint_id = e.webhook_endpoint_id')
            .modify(due, now);
        })
        .select('e.webhook_endpoint_id', 'e.tenant_id');
      if (rows.length === 0) return [];
      const others = await leases.leasedByOthers(
        rows.map((row) => row.webhook_endpoint_id),
        holder,
        graceMs,
      );
      return rows
        .filter((row) => !others.has(row.webhook_endpoint_id))
        .map((row) => ({ endpointId: row.webhook_endpoint_id, tenantId: row.tenant_id }));
    },

    /**
     * Claims up to `wanted` due attempts of each endpoint (by id) for `leaseMs`, of those whose
     * lease `holder` has or may take: the leases are taken or renewed first (endpoint-leases.ts),
     * then each attempt is taken with a conditional update, so no attempt is claimed twice while
     * its lease runs; one claim serves many endpoints in a few statements. Answers, for each
     * endpoint whose lease `holder` has, when the lease runs out at the soonest (epoch ms) and the
     * attempts claimed; an endpoint another holder has, or disabled or gone, is not in it. The
     * attempts come without their events: see eventsToSend. `claim` names the claim, so that a
     * claim whose answer was lost (the connection broke at its commit) can be given back
     * (releaseClaim) rather than left to run out. `knownUntil`: when the leases `holder` knows it
     * wrote run out (see endpointLeases' take).
     */
    async claim(
      wanted: Map<string, number>,
      holder: string,
      claim: string,
      times: { leaseMs: number; endpointLeaseMs: number; graceMs: number },
      knownUntil?: ReadonlyMap<string, number>,
    ): Promise<Map<string, { leasedUntil: number; deliveries: ClaimedDelivery[] }>> {
      const leased = await leases.take([...wanted.keys()], holder, times, knownUntil);
      const answers = new Map(
        [...leased].map(([endpointId, leasedUntil]) => [
          endpointId,
          { leasedUntil, deliveries: [] as ClaimedDelivery[] },
        ]),
      );
      if (leased.size === 0) return answers;
      const claimed = await takeDue(
        new Map([...wanted].filter(([endpointId]) => leased.has(endpointId))),
        claim,
        times.leaseMs,
      );
      for (const delivery of claimed) answers.get(delivery.endpointId)!.deliveries.push(delivery);
      return answers;
    },

    stillLeased: leases.stillLeased,
    renewLeases: leases.renewLeases,
    releaseLeases: leases.releaseLeases,
    releaseHolder: leases.releaseHolder,

    /**
     * How many attempts of enabled endpoints were due at `dueBy` or before and are not yet made
     * (or not yet written back): one probe of the due index per enabled endpoint.
     */
    async countDue(dueBy: Date): Promise<number> {
      const row = await knex('webhook_endpoints as e')
        .join('webhook_deliveries as d', 'd.webhook_endpoint_id', 'e.webhook_endpoint_id')
        .where('e.enabled', true)
        .where('d.status', 'pending')
        .where('d.next_attempt_at', '<=', toDbTimestamp(dueBy.toISOString()))
        .count({ count: '*' })
        .first();
      return Number(row?.count ?? 0);
    },

    /**
     * The events of these attempts as the feed shows them, by event_id, read just before the
     * attempts are made; an event retention has removed is missing.
     */
    async eventsToSend(eventIds: string[]): Promise<Map<string, EventToSend>> {
      if (eventIds.length === 0) return new Map();
      const rows: EventRow[] = await knex('events')
        .select('event_id', 'sequence', 'type', 'created_at', 'project_id', 'request_id', 'data')
        .whereIn('event_id', eventIds)
        .modify(numbered);
      return new Map(
        rows.map((row) => [
          row.event_id,
          { json: eventJson(row), createdAt: fromDbTimestamp(row.created_at) },
        ]),
      );
    },

    ...outcomes,

    /** Gives claimed attempts back unmade (the instance is stopping, or they wait no more), due at once for any instance. */
    async release(deliveries: ClaimedDelivery[]): Promise<void> {
      if (deliveries.length === 0) return;
      await inTransaction(
        knex,
        'webhook-release',
        ({ trx }) =>
          trx('webhook_deliveries')
            .whereIn(
              'delivery_id',
              deliveries.map((delivery) => delivery.deliveryId),
            )
            .whereIn('claimed_by', [...new Set(deliveries.map((delivery) => delivery.claim))])
            .where('status', 'pending')
            .update({ claimed_by: null, lease_until: null }),
        readCommitted,
      );
    },

    /**
     * Gives back every attempt of these endpoints still under this claim: one whose transaction's
     * answer was lost, so nothing of it was made. Its attempts are found by the endpoints' index
     * and then released by primary key, as a claim takes them.
     */
    async releaseClaim(endpointIds: string[], claim: string): Promise<void> {
      const ids: string[] = await knex('webhook_deliveries')
        .whereIn('webhook_endpoint_id', endpointIds)
        .where({ status: 'pending', claimed_by: claim })
        .pluck('delivery_id');
      if (ids.length === 0) return;
      await inTransaction(
        knex,
        'webhook-release',
        ({ trx }) =>
          trx('webhook_deliveries')
            .whereIn('delivery_id', ids)
            .where({ status: 'pending', claimed_by: claim })
            .update({ claimed_by: null, lease_until: null }),
        readCommitted,
      );
    },
  });
}
