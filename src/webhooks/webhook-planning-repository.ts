/**
 * Planning webhook deliveries: the first attempt of each numbered event for each enabled endpoint
 * of its tenant whose types (and subscription, subscriptions.ts) select it. Planning follows numbering, a tenant at a time from the
 * last sequence planned (`webhook_planning`), a bounded chunk per transaction, so a tenant with
 * many endpoints and many events never holds a transaction, a lock or a connection for long. The
 * chunk's attempts and the tenant's new mark commit together, and the mark moves only from the
 * value read (a conditional write): of two plannings of one chunk, wherever they run, one commits
 * and the other runs again from the new mark, so an event is planned once, after a crash too.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/api';
import { isDuplicateKey, translatingErrors, WriteConflictError } from '../db/database-errors';
import { nowForDb, toDbTimestamp } from '../db/timestamps';
import { inTransaction } from '../db/transactions';
import { toClaimed, type ClaimRow, type ClaimedDelivery } from './delivery-queue-repository';
import { plannedAttempt } from './webhook-deliveries-repository';
import { eventTypesOf } from './webhook-endpoints-repository';
import { subscriptionOf, taskEventsFor } from './subscriptions';

type EventType = components['schemas']['EventType'];

/** Rows per INSERT (SQLite allows 32,766 bound values). */
const insertChunk = 200;
/** Events read with their data at once, for subscriptions to look at. */
const dataSlice = 100;

export type WebhookPlanningRepository = ReturnType<typeof webhookPlanningRepository>;

/**
 * Attempts planning claims as it plans them, for the delivery worker of its own instance: as many
 * as `rooms` allows for each endpoint (whose lease the worker holds), under `claim` for `leaseMs`,
 * as a claim would take them once planned.
 */
export interface PlanningClaim {
  claim: string;
  leaseMs: number;
  rooms: ReadonlyMap<string, number>;
}

/** What a claim reads of an endpoint: its address, secrets, health and version. */
const claimColumns = [
  'url',
  'tenant_id',
  'secret',
  'retired_secrets',
  'previous_secret',
  'previous_secret_until',
  'failing_since',
  'api_version',
] as const;

export function webhookPlanningRepository(knex: Knex) {
  return translatingErrors({
    /** The tenants with numbered events whose deliveries are not planned yet. */
    async laggingTenants(): Promise<string[]> {
      return knex('event_sequences as s')
        .leftJoin('webhook_planning as p', 'p.tenant_id', 's.tenant_id')
        .where((q) => q.whereNull('p.tenant_id').orWhereRaw('p.planned_sequence < s.last_sequence'))
        .pluck('s.tenant_id');
    },

    /**
     * Plans the deliveries of the tenant's next numbered events after its mark, as many events as
     * make at most `maxAttempts` attempts (at least one event), in one transaction, claiming
     * what `claiming` has room for. Answers how many attempts it planned, the endpoints left with
     * attempts to claim, what it claimed, and whether the tenant's numbered events are all
     * planned now.
     */
    async planNext(
      tenantId: string,
      maxAttempts: number,
      claiming?: PlanningClaim,
    ): Promise<{
      planned: number;
      endpointIds: Set<string>;
      claimed: ClaimedDelivery[];
      caughtUp: boolean;
    }> {
      return inTransaction(
        knex,
        'webhook-planning',
        async ({ trx }) => {
          // The tenant's last sequence and its mark, in one round trip (no counter: nothing numbered).
          const counter:
            | { last_sequence: number | string; planned_sequence: number | string | null }
            | undefined = await trx('event_sequences as s')
            .leftJoin('webhook_planning as p', 'p.tenant_id', 's.tenant_id')
            .first('s.last_sequence', 'p.planned_sequence')
            .where('s.tenant_id', tenantId);
          const last = Number(counter?.last_sequence ?? 0);
          const marked = counter !== undefined && counter.planned_sequence !== null;
          const mark = Number(counter?.planned_sequence ?? 0);
          if (mark >= last)
            return { planned: 0, endpointIds: new Set(), claimed: [], caughtUp: true };
          const endpoints: Array<
            Omit<ClaimRow, 'delivery_id' | 'event_id' | 'event_type' | 'attempt'> & {
              event_types: string | null;
              task_filter: string | null;
              task_fields: string | null;
            }
          > = await trx('webhook_endpoints')
            .select(
              'webhook_endpoint_id',
              'event_types',
              'task_filter',
              'task_fields',
              ...(claiming ? claimColumns : []),
            )
            .where({ tenant_id: tenantId, enabled: true });
          const selecting = endpoints.map((endpoint) => ({
            endpoint,
            types: eventTypesOf(endpoint),
            subscription: subscriptionOf(endpoint.task_filter, endpoint.task_fields),
            room: claiming?.rooms.get(endpoint.webhook_endpoint_id) ?? 0,
          }));
          // The events' data is read only for a subscription to look at. A chunk is as long with
          // it as without (its data is read a slice at a time, below): at 200, a subscription
          // cost its tenant two and a half times the planning transactions.
          const subscribed = selecting.some((one) => one.subscription !== undefined);
          const taskEventOf = subscribed && taskEventsFor(selecting.map((one) => one.subscription));
          const upTo =
            endpoints.length === 0
              ? last
              : Math.min(last, mark + Math.max(1, Math.floor(maxAttempts / endpoints.length)));
          // The mark moves first: a planning of the same chunk elsewhere waits here, then finds it moved.
          if (!marked) {
            await trx('webhook_planning')
              .insert({ tenant_id: tenantId, planned_sequence: upTo })
              .catch((error: unknown) => {
                throw isDuplicateKey(error) ? new WriteConflictError() : error;
              });
          } else if (
            (await trx('webhook_planning')
              .where({ tenant_id: tenantId, planned_sequence: mark })
              .update({ planned_sequence: upTo })) !== 1
          ) {
            throw new WriteConflictError();
          }
          if (endpoints.length === 0)
            return { planned: 0, endpointIds: new Set(), claimed: [], caughtUp: upTo >= last };
          const now = nowForDb();
          const rows = [];
          const claimed: ClaimedDelivery[] = [];
          const unclaimed = new Set<string>();
          const leaseUntil = claiming && Date.now() + claiming.leaseMs;
          // With their data, the events are read a slice at a time, each let go once looked at:
          // a chunk's data held at once outlived the scavenges its reading took, and filled the
          // old generation a fifth faster than deliveries without a subscription.
          const slice = subscribed ? dataSlice : upTo - mark;
          for (let from = mark; from < upTo; from += slice) {
            const events: Array<{ event_id: string; type: EventType; data?: string }> = await trx(
              'events',
            )
              .select('event_id', 'type', ...(subscribed ? ['data'] : []))
              .where('tenant_id', tenantId)
              .where('sequence', '>', from)
              .where('sequence', '<=', Math.min(upTo, from + slice));
            for (const event of events) {
              // Read only when a subscription first asks, once for all of them.
              const taskEvent = taskEventOf && taskEventOf(event.type, event.data!);
              for (const one of selecting) {
                if (one.types !== null && !one.types.includes(event.type)) continue;
                if (taskEvent && one.subscription && !one.subscription.wants(taskEvent)) continue;
                const row = plannedAttempt(one.endpoint.webhook_endpoint_id, event, 1, now, now);
                rows.push(row);
                if (claiming && one.room > 0) {
                  one.room--;
                  row.claimed_by = claiming.claim;
                  row.lease_until = toDbTimestamp(new Date(leaseUntil!).toISOString());
                  claimed.push(
                    toClaimed(
                      { ...one.endpoint, ...row, event_type: event.type },
                      claiming.claim,
                      leaseUntil!,
                      now,
                    ),
                  );
                } else unclaimed.add(row.webhook_endpoint_id);
              }
            }
          }
          for (let i = 0; i < rows.length; i += insertChunk)
            await trx('webhook_deliveries').insert(rows.slice(i, i + insertChunk));
          return { planned: rows.length, endpointIds: unclaimed, claimed, caughtUp: upTo >= last };
        },
        { readCommitted: true },
      );
    },
  });
}
