/**
 * Webhook deliveries as a tenant sees them: one row per attempt of an event to an endpoint, the
 * delivery log of each endpoint, newest first, kept as long as events are, and the redeliveries a
 * tenant asks for. First attempts are planned after their events are numbered
 * (webhook-planning-repository.ts) or by a redelivery; the worker claims them and writes their
 * outcomes (delivery-queue-repository.ts).
 */
import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import type { components } from '../../generated/api';
import { EndpointDisabledError, UnknownEventError } from '../errors';
import { translatingErrors } from '../db/database-errors';
import { numbered } from '../db/event-log';
import { selectPage } from '../db/keyset';
import { fromDbTimestamp, nowForDb, toDbTimestamp, type DbTimestamp } from '../db/timestamps';
import type { QuerySource, WriteContext } from '../db/transactions';

type WebhookDelivery = components['schemas']['WebhookDelivery'];
type WebhookDeliveryPage = components['schemas']['WebhookDeliveryPage'];
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

/** An attempt planned, due at `dueAt`: the first of an event (planned or redelivered) or a retry. */
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

export type WebhookDeliveriesRepository = ReturnType<typeof webhookDeliveriesRepository>;

export function webhookDeliveriesRepository(knex: Knex) {
  const endpointOfTenant = (db: QuerySource, tenantId: string, endpointId: string) =>
    db('webhook_endpoints')
      .first('webhook_endpoint_id', 'enabled')
      .where({ webhook_endpoint_id: endpointId, tenant_id: tenantId });
  return translatingErrors({
    /**
     * Plans a new first attempt of a kept event of the tenant to the endpoint, due now; undefined
     * when the tenant has no such endpoint, EndpointDisabledError when it is disabled,
     * UnknownEventError when the tenant has no such numbered event.
     */
    async redeliver(
      tenantId: string,
      endpointId: string,
      eventId: string,
      { trx }: WriteContext,
    ): Promise<WebhookDelivery | undefined> {
      const endpoint = await endpointOfTenant(trx, tenantId, endpointId);
      if (endpoint === undefined) return undefined;
      if (!endpoint.enabled) throw new EndpointDisabledError(endpointId);
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
