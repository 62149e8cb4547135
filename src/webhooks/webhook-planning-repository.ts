/**
 * Planning webhook deliveries: the first attempt of each numbered event for each enabled endpoint
 * of its tenant whose types select it. Planning follows numbering, a tenant at a time from the
 * last sequence planned (`webhook_planning`), a bounded chunk per transaction, so a tenant with
 * many endpoints and many events never holds a transaction, a lock or a connection for long. The
 * chunk's attempts and the tenant's new mark commit together, and the mark moves only from the
 * value read (a conditional write): of two plannings of one chunk, wherever they run, one commits
 * and the other runs again from the new mark, so an event is planned once, after a crash too.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/api';
import { isDuplicateKey, translatingErrors, WriteConflictError } from '../db/database-errors';
import { nowForDb } from '../db/timestamps';
import { inTransaction } from '../db/transactions';
import { plannedAttempt } from './webhook-deliveries-repository';
import { eventTypesOf } from './webhook-endpoints-repository';

type EventType = components['schemas']['EventType'];

/** Rows per INSERT (SQLite allows 32,766 bound values). */
const insertChunk = 200;

export type WebhookPlanningRepository = ReturnType<typeof webhookPlanningRepository>;

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
     * make at most `maxAttempts` attempts (at least one event), in one transaction. Answers how
     * many attempts it planned and whether the tenant's numbered events are all planned now.
     */
    async planNext(
      tenantId: string,
      maxAttempts: number,
    ): Promise<{ planned: number; caughtUp: boolean }> {
      return inTransaction(
        knex,
        'webhook-planning',
        async ({ trx }) => {
          const counter = await trx('event_sequences')
            .first('last_sequence')
            .where('tenant_id', tenantId);
          const last = Number(counter?.last_sequence ?? 0);
          const markRow = await trx('webhook_planning')
            .first('planned_sequence')
            .where('tenant_id', tenantId);
          const mark = Number(markRow?.planned_sequence ?? 0);
          if (mark >= last) return { planned: 0, caughtUp: true };
          const endpoints: Array<{ webhook_endpoint_id: string; event_types: string | null }> =
            await trx('webhook_endpoints')
              .select('webhook_endpoint_id', 'event_types')
              .where({ tenant_id: tenantId, enabled: true });
          const upTo =
            endpoints.length === 0
              ? last
              : Math.min(last, mark + Math.max(1, Math.floor(maxAttempts / endpoints.length)));
          // The mark moves first: a planning of the same chunk elsewhere waits here, then finds it moved.
          if (markRow === undefined) {
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
          if (endpoints.length === 0) return { planned: 0, caughtUp: upTo >= last };
          const events: Array<{ event_id: string; type: EventType }> = await trx('events')
            .select('event_id', 'type')
            .where('tenant_id', tenantId)
            .where('sequence', '>', mark)
            .where('sequence', '<=', upTo);
          const now = nowForDb();
          const selecting = endpoints.map((endpoint) => ({
            id: endpoint.webhook_endpoint_id,
            types: eventTypesOf(endpoint),
          }));
          const rows = events.flatMap((event) =>
            selecting
              .filter((endpoint) => endpoint.types === null || endpoint.types.includes(event.type))
              .map((endpoint) => plannedAttempt(endpoint.id, event, 1, now, now)),
          );
          for (let i = 0; i < rows.length; i += insertChunk)
            await trx('webhook_deliveries').insert(rows.slice(i, i + insertChunk));
          return { planned: rows.length, caughtUp: upTo >= last };
        },
        { readCommitted: true },
      );
    },
  });
}
