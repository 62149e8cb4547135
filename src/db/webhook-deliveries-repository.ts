/**
 * Webhook deliveries: one row per attempt of an event to an endpoint. First attempts are planned
 * after their events are numbered (webhook-planning-repository.ts), or by a redelivery. One
 * instance at a time serves an endpoint (a lease named for it, in `leases`); it claims the endpoint's due attempts with
 * conditional updates and a lease (claimed_by, lease_until), makes them outside any transaction,
 * and writes each outcome back under its claim. No row locks are relied on, so the claims hold on
 * a cluster where one node's locks do not block another's.
 *
 * Every write here runs READ COMMITTED and names its rows by primary key: it locks only the rows
 * it changes, never a range or a gap of an index. On Galera a write set applied from another node
 * aborts any local transaction holding a lock it needs; under REPEATABLE READ a claim's update
 * over an endpoint's due attempts held next-key locks on every pending attempt of the endpoint
 * and the gap after them, so the attempts planned for new events and the outcomes written through
 * another node aborted it (behind HAProxy, one instance's writes go to every node). Serving is
 * kept apart from the endpoint's row for the same reason: that row is the parent of every attempt
 * (a foreign key), and each attempt planned or written locks it shared, so writing it every few
 * seconds aborted plannings and outcomes on the other nodes, or was aborted by them.
 */
import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import type { components } from '../../generated/api';
import { UnknownEventError } from '../errors';
import { isDuplicateKey, translatingErrors } from './database-errors';
import { numbered, toEvent, type EventRow } from './events-repository';
import { selectPage } from './keyset';
import { fromDbTimestamp, nowForDb, toDbTimestamp, type DbTimestamp } from './timestamps';
import { inTransaction, type QuerySource, type WriteContext } from './transactions';

type WebhookDelivery = components['schemas']['WebhookDelivery'];
type WebhookDeliveryPage = components['schemas']['WebhookDeliveryPage'];
type Event = components['schemas']['Event'];
type EventType = components['schemas']['EventType'];

interface DeliveryRow {
  delivery_id: string;
  webhook_endpoint_id: string;
  event_id: string;
  event_type: EventType;
  attempt: number;
  status: WebhookDelivery['status'];
  response_status: number | null;
  error: string | null;
  duration_ms: number | null;
  created_at: DbTimestamp;
  next_attempt_at: DbTimestamp | null;
  claimed_by: string | null;
  lease_until: DbTimestamp | null;
  [column: string]: unknown;
}

function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    delivery_id: row.delivery_id,
    event_id: row.event_id,
    event_type: row.event_type,
    attempt: Number(row.attempt),
    status: row.status,
    response_status: row.response_status === null ? null : Number(row.response_status),
    error: row.error,
    duration_ms: row.duration_ms === null ? null : Number(row.duration_ms),
    created_at: fromDbTimestamp(row.created_at),
    next_attempt_at: row.next_attempt_at === null ? null : fromDbTimestamp(row.next_attempt_at),
  };
}

export function plannedAttempt(
  endpointId: string,
  event: { event_id: string; type: EventType },
  attempt: number,
  at: DbTimestamp,
  dueAt: DbTimestamp,
): DeliveryRow {
  return {
    delivery_id: uuidv7(),
    webhook_endpoint_id: endpointId,
    event_id: event.event_id,
    event_type: event.type,
    attempt,
    status: 'pending',
    response_status: null,
    error: null,
    duration_ms: null,
    created_at: at,
    next_attempt_at: dueAt,
    claimed_by: null,
    lease_until: null,
  };
}

/**
 * An attempt this instance has claimed, with what making it needs but its event, which is read
 * just before the attempt is made (a claimed attempt waiting for its turn holds no event body).
 */
export interface ClaimedDelivery {
  deliveryId: string;
  /** The claim: the outcome is written only while the row is still under it. */
  claim: string;
  /** When the claim runs out at the soonest (epoch milliseconds): past it another claim may make the attempt. */
  leaseUntil: number;
  endpointId: string;
  tenantId: string;
  url: string;
  /** The secrets that sign it: the current one, and the one before a rotation for its 24 hours. */
  secrets: string[];
  /** Whether the endpoint's attempts were failing when it was claimed. */
  endpointFailing: boolean;
  eventId: string;
  eventType: EventType;
  attempt: number;
}

/** An endpoint with due attempts that an instance may serve. */
export interface DueEndpoint {
  endpointId: string;
  tenantId: string;
}

export interface DeliveryOutcome {
  succeeded: boolean;
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
  /** When the next attempt is planned; none when the schedule is spent (or on success). */
  retryAt?: Date;
  /** The receiver answered 410: disable the endpoint at once. */
  gone: boolean;
  /** Disable the endpoint when its attempts have all failed since before this. */
  failingBefore: Date;
}

export type WebhookDeliveriesRepository = ReturnType<typeof webhookDeliveriesRepository>;

/** The lease an instance holds while it serves the endpoint. */
const servingLease = (endpointId: string) => `webhook-serving:${endpointId}`;

export function webhookDeliveriesRepository(knex: Knex) {
  const endpointOfTenant = (db: QuerySource, tenantId: string, endpointId: string) =>
    db('webhook_endpoints')
      .first('webhook_endpoint_id')
      .where({ webhook_endpoint_id: endpointId, tenant_id: tenantId });

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

  const readCommitted = { readCommitted: true };

  /** Serving for the first time since the lease was removed: of two at once, one inserts it. */
  const insertLease = async (name: string, holder: string, expiresAt: DbTimestamp) => {
    try {
      await inTransaction(
        knex,
        'webhook-serving',
        ({ trx }) => trx('leases').insert({ name, holder, expires_at: expiresAt }),
        readCommitted,
      );
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  };

  /** Serves on, or takes over from a holder whose time ran out before `expiredBefore`: a conditional update. */
  const takeLease = async (
    name: string,
    holder: string,
    expiresAt: DbTimestamp,
    expiredBefore: DbTimestamp,
  ) =>
    (await inTransaction(
      knex,
      'webhook-serving',
      ({ trx }) =>
        trx('leases')
          .where('name', name)
          .where((q) => q.where('holder', holder).orWhere('expires_at', '<', expiredBefore))
          .update({ holder, expires_at: expiresAt }),
      readCommitted,
    )) > 0;

  return translatingErrors({
    /**
     * Plans a new first attempt of a kept event of the tenant to the endpoint, due now; undefined
     * when the tenant has no such endpoint, UnknownEventError when it has no such numbered event.
     */
    async redeliver(
      tenantId: string,
      endpointId: string,
      eventId: string,
      { trx }: WriteContext,
    ): Promise<WebhookDelivery | undefined> {
      if ((await endpointOfTenant(trx, tenantId, endpointId)) === undefined) return undefined;
      const event: { event_id: string; type: EventType } | undefined = await trx('events')
        .first('event_id', 'type')
        .where({ event_id: eventId, tenant_id: tenantId })
        .modify(numbered);
      if (event === undefined) throw new UnknownEventError(eventId);
      const now = nowForDb();
      const row = plannedAttempt(endpointId, event, 1, now, now);
      await trx('webhook_deliveries').insert(row);
      return toDelivery(row);
    },

    /** A page of the endpoint's attempts, newest first; undefined when the tenant has no such endpoint. */
    async list(
      tenantId: string,
      endpointId: string,
      page: { limit: number; cursor?: string },
    ): Promise<WebhookDeliveryPage | undefined> {
      const { rows, nextCursor } = await selectPage<DeliveryRow>({
        db: knex,
        table: 'webhook_deliveries',
        idColumn: 'delivery_id',
        scope: (q) => q.where('webhook_deliveries.webhook_endpoint_id', endpointId),
        visibleTo: (q) => q.whereExists(endpointOfTenant(knex, tenantId, endpointId)),
        order: { column: 'created_at', descending: true },
        ...page,
      });
      if (rows.length === 0 && (await endpointOfTenant(knex, tenantId, endpointId)) === undefined)
        return undefined;
      return { data: rows.map(toDelivery), next_cursor: nextCursor };
    },

    /**
     * The enabled endpoints that have an attempt due and unclaimed, and that `holder` serves or
     * may take over (served by no one, or by a holder whose time ran out more than `graceMs` ago):
     * one probe of an index each, then their serving leases.
     */
    async endpointsWithDueAttempts(holder: string, graceMs: number): Promise<DueEndpoint[]> {
      const now = nowForDb();
      const rows: Array<{ webhook_endpoint_id: string; tenant_id: string }> = await knex(
        'webhook_endpoints as e',
      )
        .where('e.enabled', true)
        .whereExists((q) => {
          q.select(knex.raw('1'))
            .from('webhook_deliveries')
            .whereRaw('webhook_deliveries.webhook_endpoint_id = e.webhook_endpoint_id')
            .modify(due, now);
        })
        .select('e.webhook_endpoint_id', 'e.tenant_id');
      if (rows.length === 0) return [];
      const longExpired = toDbTimestamp(new Date(Date.now() - graceMs).toISOString());
      const others = new Set(
        (await knex('leases')
          .whereIn(
            'name',
            rows.map((row) => servingLease(row.webhook_endpoint_id)),
          )
          .whereNot('holder', holder)
          .where('expires_at', '>=', longExpired)
          .pluck('name')) as string[],
      );
      return rows
        .filter((row) => !others.has(servingLease(row.webhook_endpoint_id)))
        .map((row) => ({ endpointId: row.webhook_endpoint_id, tenantId: row.tenant_id }));
    },

    /**
     * Claims up to `wanted` due attempts of the endpoint for `leaseMs`, if `holder` serves the
     * endpoint or may take it over. Serving is made sure of first: when `holder` does not serve
     * the endpoint, or a third of its time has passed, the endpoint is served by `holder` for
     * `serveMs` more (a conditional update of its own: of two instances at once, or two nodes of
     * a cluster, where locks do not reach, one gets it). Then each attempt is taken with a
     * conditional update, so no attempt is claimed twice while its lease runs, in a transaction
     * that writes attempts only: the endpoint's row is the parent of every attempt planned for it
     * (a foreign key), so a claim that wrote it would hold the lock every insert of a planned
     * attempt checks, and on Galera each one applied meanwhile would abort the claim, or the claim
     * applied would abort the planning. Answers undefined when another holder serves the endpoint
     * (or it is disabled or gone), and otherwise until when it is served at the soonest (epoch
     * milliseconds). The attempts come without their events: see eventsToSend. `claim` names the
     * claim, so that a claim whose answer was lost (the connection broke at its commit) can be
     * given back (releaseClaim) rather than left to run out.
     */
    async claim(
      endpointId: string,
      holder: string,
      claim: string,
      wanted: number,
      times: { leaseMs: number; serveMs: number; graceMs: number },
    ): Promise<{ servedUntil: number; deliveries: ClaimedDelivery[] } | undefined> {
      const at = (offsetMs: number) => toDbTimestamp(new Date(Date.now() + offsetMs).toISOString());
      const servingFrom = Date.now();
      if (
        (await knex('webhook_endpoints')
          .first('webhook_endpoint_id')
          .where({ webhook_endpoint_id: endpointId, enabled: true })) === undefined
      )
        return undefined;
      const name = servingLease(endpointId);
      const serving: { holder: string; expires_at: DbTimestamp } | undefined = await knex('leases')
        .first('holder', 'expires_at')
        .where('name', name);
      let servedUntil: number;
      if (serving?.holder === holder && serving.expires_at >= at((times.serveMs * 2) / 3)) {
        servedUntil = servingFrom + (times.serveMs * 2) / 3;
      } else {
        const taken =
          serving === undefined
            ? await insertLease(name, holder, at(times.serveMs))
            : await takeLease(name, holder, at(times.serveMs), at(-times.graceMs));
        if (!taken) return undefined;
        servedUntil = servingFrom + times.serveMs;
      }
      // Taken before the lease is written, so the claim believes it runs out a little early, never late.
      const leaseUntil = Date.now() + times.leaseMs;
      const deliveries = await inTransaction(
        knex,
        'webhook-claim',
        async ({ trx }) => {
          const now = nowForDb();
          // A plain read: it locks nothing, and the update below takes only the rows it read. Of an
          // endpoint still enabled; its serving was made sure of above.
          // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the columns selected below
          const rows: Array<Record<string, any>> = await trx('webhook_deliveries')
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
              'webhook_deliveries.event_id',
              'webhook_deliveries.event_type',
              'webhook_deliveries.attempt',
              'w.url',
              'w.tenant_id',
              'w.secret',
              'w.previous_secret',
              'w.previous_secret_until',
              'w.failing_since',
            )
            .orderBy([
              { column: 'webhook_deliveries.next_attempt_at' },
              { column: 'webhook_deliveries.delivery_id' },
            ])
            .limit(wanted);
          if (rows.length === 0) return [];
          const ids = rows.map((row) => row.delivery_id as string);
          const claimed = await trx('webhook_deliveries')
            .whereIn('webhook_deliveries.delivery_id', ids)
            .modify(due, now)
            .update({ claimed_by: claim, lease_until: at(times.leaseMs) });
          // Another claim took some meanwhile (a lease ran out under it): keep only this claim's.
          const ours =
            claimed === ids.length
              ? undefined
              : new Set<string>(
                  await trx('webhook_deliveries')
                    .whereIn('delivery_id', ids)
                    .where('claimed_by', claim)
                    .pluck('delivery_id'),
                );
          return rows
            .filter((row) => ours === undefined || ours.has(row.delivery_id))
            .map((row): ClaimedDelivery => {
              const secrets = [row.secret as string];
              if (row.previous_secret !== null && row.previous_secret_until > now)
                secrets.push(row.previous_secret);
              return {
                deliveryId: row.delivery_id,
                claim,
                leaseUntil,
                endpointId,
                tenantId: row.tenant_id,
                url: row.url,
                secrets,
                endpointFailing: row.failing_since !== null,
                eventId: row.event_id,
                eventType: row.event_type,
                attempt: Number(row.attempt),
              };
            });
        },
        readCommitted,
      );
      return { servedUntil, deliveries };
    },

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

    /** Of these endpoints, those still enabled and served by `holder` (not disabled, deleted or taken over). */
    async stillServed(endpointIds: string[], holder: string): Promise<Set<string>> {
      if (endpointIds.length === 0) return new Set();
      const enabled = new Set<string>(
        await knex('webhook_endpoints')
          .whereIn('webhook_endpoint_id', endpointIds)
          .where('enabled', true)
          .pluck('webhook_endpoint_id'),
      );
      const held = new Set<string>(
        await knex('leases')
          .whereIn('name', endpointIds.map(servingLease))
          .where('holder', holder)
          .pluck('name'),
      );
      return new Set(endpointIds.filter((id) => enabled.has(id) && held.has(servingLease(id))));
    },

    /**
     * The events of these attempts as the feed shows them, by event_id, read just before the
     * attempts are made; an event retention has removed is missing.
     */
    async eventsToSend(eventIds: string[]): Promise<Map<string, Event>> {
      if (eventIds.length === 0) return new Map();
      const rows: EventRow[] = await knex('events')
        .select('event_id', 'sequence', 'type', 'created_at', 'project_id', 'request_id', 'data')
        .whereIn('event_id', eventIds)
        .modify(numbered);
      return new Map(rows.map((row) => [row.event_id, toEvent(row)]));
    },

    /**
     * Serves these endpoints `serveMs` more, in one statement, where `holder` still does; answers
     * those it still serves and that are enabled (a conditional update, then reads of what it
     * wrote, in one transaction: no row lock is relied on).
     */
    async keepServing(
      endpointIds: string[],
      holder: string,
      serveMs: number,
    ): Promise<Set<string>> {
      if (endpointIds.length === 0) return new Set();
      const names = endpointIds.map(servingLease);
      const renewed = await inTransaction(
        knex,
        'webhook-serving',
        async ({ trx }) => {
          const ours = () =>
            trx('leases')
              .whereIn('name', names)
              .where('holder', holder)
              .where('expires_at', '>=', nowForDb());
          await ours().update({
            expires_at: toDbTimestamp(new Date(Date.now() + serveMs).toISOString()),
          });
          return new Set<string>(await ours().pluck('name'));
        },
        readCommitted,
      );
      const enabled = new Set<string>(
        await knex('webhook_endpoints')
          .whereIn('webhook_endpoint_id', endpointIds)
          .where('enabled', true)
          .pluck('webhook_endpoint_id'),
      );
      return new Set(endpointIds.filter((id) => enabled.has(id) && renewed.has(servingLease(id))));
    },

    /** Stops serving these endpoints at once (the instance is stopping), for another instance to take over. */
    async stopServing(endpointIds: string[], holder: string): Promise<void> {
      if (endpointIds.length === 0) return;
      await inTransaction(
        knex,
        'webhook-serving',
        ({ trx }) =>
          trx('leases')
            .whereIn('name', endpointIds.map(servingLease))
            .where('holder', holder)
            .delete(),
        readCommitted,
      );
    },

    /**
     * Writes an attempt's outcome, if the attempt is still under this claim, with its retry and
     * what it means for the endpoint (a success ends its run of failures; a 410, or failures for
     * long enough, disable it), all in one transaction. False when the claim was lost (its lease
     * ran out and another took the attempt over, or the endpoint was deleted).
     */
    async recordOutcome(
      delivery: ClaimedDelivery,
      outcome: DeliveryOutcome,
    ): Promise<{ kept: boolean; disabled?: 'gone' | 'failing' }> {
      return inTransaction(
        knex,
        'webhook-outcome',
        async ({ trx }) => {
          const now = nowForDb();
          const retryAt = outcome.retryAt && toDbTimestamp(outcome.retryAt.toISOString());
          const written = await trx('webhook_deliveries')
            .where({
              delivery_id: delivery.deliveryId,
              claimed_by: delivery.claim,
              status: 'pending',
            })
            .update({
              status: outcome.succeeded ? 'succeeded' : 'failed',
              response_status: outcome.responseStatus,
              error: outcome.error,
              duration_ms: outcome.durationMs,
              next_attempt_at: retryAt ?? null,
              claimed_by: null,
              lease_until: null,
            });
          if (written === 0) return { kept: false };
          if (retryAt)
            await trx('webhook_deliveries').insert(
              plannedAttempt(
                delivery.endpointId,
                { event_id: delivery.eventId, type: delivery.eventType },
                delivery.attempt + 1,
                now,
                retryAt,
              ),
            );
          const endpoint = () =>
            trx('webhook_endpoints').where('webhook_endpoint_id', delivery.endpointId);
          if (outcome.succeeded) {
            if (delivery.endpointFailing)
              await endpoint().whereNotNull('failing_since').update({ failing_since: null });
            return { kept: true };
          }
          if (!delivery.endpointFailing)
            await endpoint().whereNull('failing_since').update({ failing_since: now });
          if (outcome.gone) {
            const disabled = await endpoint()
              .where('enabled', true)
              .update({ enabled: false, disabled_reason: 'gone', updated_at: now });
            return disabled > 0 ? { kept: true, disabled: 'gone' } : { kept: true };
          }
          if (delivery.endpointFailing) {
            const disabled = await endpoint()
              .where('enabled', true)
              .where('failing_since', '<=', toDbTimestamp(outcome.failingBefore.toISOString()))
              .update({ enabled: false, disabled_reason: 'failing', updated_at: now });
            if (disabled > 0) return { kept: true, disabled: 'failing' };
          }
          return { kept: true };
        },
        readCommitted,
      );
    },

    /**
     * Writes the outcomes of attempts that succeeded, in one statement (one commit for many),
     * for those still under their claims; ends the run of failures of their endpoints that had
     * one. Answers how many were still under their claims.
     */
    async recordSuccesses(
      successes: Array<{ delivery: ClaimedDelivery; responseStatus: number; durationMs: number }>,
    ): Promise<number> {
      if (successes.length === 0) return 0;
      const cases = (value: (success: (typeof successes)[number]) => number) => ({
        sql: `case delivery_id ${successes.map(() => 'when ? then ?').join(' ')} end`,
        bindings: successes.flatMap((success) => [success.delivery.deliveryId, value(success)]),
      });
      const status = cases((success) => success.responseStatus);
      const duration = cases((success) => success.durationMs);
      const ids = successes.map((success) => success.delivery.deliveryId);
      const claims = [...new Set(successes.map((success) => success.delivery.claim))];
      const recovered = [
        ...new Set(
          successes
            .filter((success) => success.delivery.endpointFailing)
            .map((success) => success.delivery.endpointId),
        ),
      ];
      // In a transaction of its own, so that a deadlock with another writer (or a certification
      // conflict on a cluster) runs it again rather than leaving the attempts to be made twice.
      const written = await inTransaction(
        knex,
        'webhook-successes',
        async ({ trx }) => {
          const updated = await trx('webhook_deliveries')
            .whereIn('delivery_id', ids)
            .whereIn('claimed_by', claims)
            .where('status', 'pending')
            .update({
              status: 'succeeded',
              response_status: knex.raw(status.sql, status.bindings),
              error: null,
              duration_ms: knex.raw(duration.sql, duration.bindings),
              next_attempt_at: null,
              claimed_by: null,
              lease_until: null,
            });
          if (recovered.length > 0)
            await trx('webhook_endpoints')
              .whereIn('webhook_endpoint_id', recovered)
              .whereNotNull('failing_since')
              .update({ failing_since: null });
          return updated;
        },
        readCommitted,
      );
      return written;
    },

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
     * Gives back every attempt of the endpoint still under this claim: one whose transaction's
     * answer was lost, so nothing of it was made. Its attempts are found by the endpoint's index
     * and then released by primary key, as a claim takes them.
     */
    async releaseClaim(endpointId: string, claim: string): Promise<void> {
      const ids: string[] = await knex('webhook_deliveries')
        .where({ webhook_endpoint_id: endpointId, status: 'pending', claimed_by: claim })
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

    /** Removes up to `batch` attempts older than the retention (events' own); how many it removed. */
    async removeOlderThan(days: number, batch: number): Promise<number> {
      const cutoff = toDbTimestamp(new Date(Date.now() - days * 86_400_000).toISOString());
      const ids: string[] = await knex('webhook_deliveries')
        .where('created_at', '<', cutoff)
        .orderBy('created_at')
        .limit(batch)
        .pluck('delivery_id');
      if (ids.length === 0) return 0;
      return knex('webhook_deliveries').whereIn('delivery_id', ids).delete();
    },
  });
}
