/**
 * Webhook endpoints: where a tenant's events are pushed, with the secrets that sign them. Every
 * change goes through a request's transaction; none records an event (events are of projects
 * and tasks).
 */
import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import type { components } from '../../generated/api';
import { translatingErrors } from './database-errors';
import { selectPage } from './keyset';
import { fromDbTimestamp, nowForDb, toDbTimestamp, type DbTimestamp } from './timestamps';
import type { QuerySource, WriteContext } from './transactions';

type WebhookEndpoint = components['schemas']['WebhookEndpoint'];
type WebhookEndpointWithSecret = components['schemas']['WebhookEndpointWithSecret'];
type WebhookEndpointPage = components['schemas']['WebhookEndpointPage'];
type WebhookEndpointUpdate = components['schemas']['WebhookEndpointUpdate'];
type EventType = components['schemas']['EventType'];

export interface NewWebhookEndpoint {
  url: string;
  eventTypes: EventType[] | null;
  description: string;
  secret: string;
}

export interface WebhookEndpointRow {
  webhook_endpoint_id: string;
  tenant_id: string;
  url: string;
  event_types: string | null;
  description: string;
  enabled: boolean | number;
  disabled_reason: WebhookEndpoint['disabled_reason'];
  secret: string;
  previous_secret: string | null;
  previous_secret_until: DbTimestamp | null;
  failing_since: DbTimestamp | null;
  served_by: string | null;
  served_until: DbTimestamp | null;
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
  [column: string]: unknown;
}

/** How long the secret before a rotation keeps signing beside the new one. */
const rotationOverlapMs = 24 * 3_600_000;

export function eventTypesOf(row: Pick<WebhookEndpointRow, 'event_types'>): EventType[] | null {
  return row.event_types === null ? null : (JSON.parse(row.event_types) as EventType[]);
}

function toEndpoint(row: WebhookEndpointRow): WebhookEndpoint {
  return {
    webhook_endpoint_id: row.webhook_endpoint_id,
    url: row.url,
    event_types: eventTypesOf(row),
    description: row.description,
    enabled: Boolean(row.enabled),
    disabled_reason: row.disabled_reason,
    created_at: fromDbTimestamp(row.created_at),
    updated_at: fromDbTimestamp(row.updated_at),
  };
}

/** A type filter as stored: a JSON array, or null for every type; a type named twice counts once. */
const storedTypes = (types: EventType[] | null | undefined) => (types == null ? null : JSON.stringify([...new Set(types)]));

export type WebhookEndpointsRepository = ReturnType<typeof webhookEndpointsRepository>;

export function webhookEndpointsRepository(knex: Knex) {
  const ofTenant = (db: QuerySource, tenantId: string, endpointId: string) =>
    db('webhook_endpoints').where({ webhook_endpoint_id: endpointId, tenant_id: tenantId });

  return translatingErrors({
    async create(tenantId: string, endpoint: NewWebhookEndpoint, { trx }: WriteContext): Promise<WebhookEndpointWithSecret> {
      const now = nowForDb();
      const row: WebhookEndpointRow = {
        webhook_endpoint_id: uuidv7(),
        tenant_id: tenantId,
        url: endpoint.url,
        event_types: storedTypes(endpoint.eventTypes),
        description: endpoint.description,
        enabled: true,
        disabled_reason: null,
        secret: endpoint.secret,
        previous_secret: null,
        previous_secret_until: null,
        failing_since: null,
        served_by: null,
        served_until: null,
        created_at: now,
        updated_at: now,
      };
      await trx('webhook_endpoints').insert(row);
      return { ...toEndpoint(row), secret: endpoint.secret };
    },

    async find(tenantId: string, endpointId: string): Promise<WebhookEndpoint | undefined> {
      const row: WebhookEndpointRow | undefined = await ofTenant(knex, tenantId, endpointId).first();
      return row && toEndpoint(row);
    },

    async list(tenantId: string, page: { limit: number; cursor?: string }): Promise<WebhookEndpointPage> {
      const { rows, nextCursor } = await selectPage<WebhookEndpointRow>({
        db: knex,
        table: 'webhook_endpoints',
        idColumn: 'webhook_endpoint_id',
        scope: (q) => q.where('webhook_endpoints.tenant_id', tenantId),
        order: { column: 'created_at', descending: false },
        ...page,
      });
      return { data: rows.map(toEndpoint), next_cursor: nextCursor };
    },

    /**
     * Applies the changes; undefined when the tenant has no such endpoint. Disabling records
     * `by_client` (an endpoint already disabled keeps its reason); enabling clears the reason
     * and the run of failures, so what is still pending is sent again.
     */
    async update(tenantId: string, endpointId: string, changes: WebhookEndpointUpdate, { trx }: WriteContext): Promise<WebhookEndpoint | undefined> {
      const row: WebhookEndpointRow | undefined = await ofTenant(trx, tenantId, endpointId).first();
      if (row === undefined) return undefined;
      const columns: Partial<WebhookEndpointRow> = { updated_at: nowForDb() };
      if (changes.url !== undefined) columns.url = changes.url;
      if (changes.event_types !== undefined) columns.event_types = storedTypes(changes.event_types);
      if (changes.description !== undefined) columns.description = changes.description;
      if (changes.enabled === false && row.enabled) Object.assign(columns, { enabled: false, disabled_reason: 'by_client' });
      if (changes.enabled === true && !row.enabled) Object.assign(columns, { enabled: true, disabled_reason: null, failing_since: null });
      // Only the columns the change names are written: a delivery's outcome may disable the
      // endpoint meanwhile, and a change of its description must not enable it again.
      await ofTenant(trx, tenantId, endpointId).update(columns);
      const updated = { ...row, ...columns };
      if (changes.enabled === false && !row.enabled) updated.disabled_reason = row.disabled_reason;
      return toEndpoint(updated as WebhookEndpointRow);
    },

    /** Deletes the endpoint and, by the foreign key's cascade, its deliveries; false when there was none. */
    async remove(tenantId: string, endpointId: string, { trx }: WriteContext): Promise<boolean> {
      return (await ofTenant(trx, tenantId, endpointId).delete()) > 0;
    },

    /**
     * Makes `secret` the endpoint's secret; the one before it keeps signing for 24 hours, and an
     * older one stops at once. False when the tenant has no such endpoint.
     */
    async rotateSecret(tenantId: string, endpointId: string, secret: string, { trx }: WriteContext): Promise<boolean> {
      const now = Date.now();
      // Assignments in this order: MySQL evaluates them left to right, so previous_secret takes
      // the secret before this statement (SQLite reads every right-hand side from the old row).
      const rotated = await ofTenant(trx, tenantId, endpointId).update({
        previous_secret: knex.ref('secret'),
        previous_secret_until: toDbTimestamp(new Date(now + rotationOverlapMs).toISOString()),
        secret,
        updated_at: toDbTimestamp(new Date(now).toISOString()),
      });
      return rotated > 0;
    },
  });
}
