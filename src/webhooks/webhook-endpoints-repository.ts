/**
 * Webhook endpoints: where a tenant's events are pushed, with the secrets that sign them. Every
 * change goes through a request's transaction; none records an event (events are of projects
 * and tasks). A tenant's endpoints are counted in `webhook_endpoint_counts`, in the transaction
 * that registers or deletes one.
 */
import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import type { components } from '../../generated/api';
import { InvalidFieldError, LimitReachedError, PreconditionFailedError } from '../errors';
import { isDuplicateKey, translatingErrors, WriteConflictError } from '../db/database-errors';
import { selectPage } from '../db/keyset';
import { fromDbTimestamp, nowForDb, toDbTimestamp, type DbTimestamp } from '../db/timestamps';
import type { QuerySource, Transaction, WriteContext } from '../db/transactions';
import { lockingRead, type VersionCondition, type Versioned } from '../db/versioned';
import { changesSince, type ApiVersion } from '../versions/versions';
import { webhookSubscriptions } from '../versions/changes/webhook-subscriptions';
import { rotation } from './webhook-secrets';

type WebhookEndpoint = components['schemas']['WebhookEndpoint'];
type WebhookEndpointWithSecret = components['schemas']['WebhookEndpointWithSecret'];
type WebhookEndpointPage = components['schemas']['WebhookEndpointPage'];
type WebhookEndpointUpdate = components['schemas']['WebhookEndpointUpdate'];
type EventType = components['schemas']['EventType'];
type TaskField = components['schemas']['TaskField'];
type TaskFilter = components['schemas']['TaskFilter'];

export interface NewWebhookEndpoint {
  url: string;
  eventTypes: EventType[] | null;
  /** The TaskFilter a task event's task must match, before or after its change; null: any task. */
  filter: TaskFilter | null;
  /** The Task fields one of which a `task.updated` must change to be sent; null: any. */
  fields: TaskField[] | null;
  description: string;
  secret: string;
  /** The version its deliveries are given in: the version of the request that made it. */
  apiVersion: ApiVersion;
}

export interface WebhookEndpointRow {
  webhook_endpoint_id: string;
  tenant_id: string;
  url: string;
  event_types: string | null;
  task_filter: string | null;
  task_fields: string | null;
  description: string;
  enabled: boolean | number;
  disabled_reason: WebhookEndpoint['disabled_reason'];
  secret: string;
  previous_secret: string | null;
  previous_secret_until: DbTimestamp | null;
  failing_since: DbTimestamp | null;
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
  version: number;
  api_version: ApiVersion;
  [column: string]: unknown;
}

export function eventTypesOf(row: Pick<WebhookEndpointRow, 'event_types'>): EventType[] | null {
  return row.event_types === null ? null : (JSON.parse(row.event_types) as EventType[]);
}

function toEndpoint(row: WebhookEndpointRow): WebhookEndpoint {
  return {
    webhook_endpoint_id: row.webhook_endpoint_id,
    url: row.url,
    event_types: eventTypesOf(row),
    filter: row.task_filter === null ? null : (JSON.parse(row.task_filter) as TaskFilter),
    fields: row.task_fields === null ? null : (JSON.parse(row.task_fields) as TaskField[]),
    description: row.description,
    enabled: Boolean(row.enabled),
    disabled_reason: row.disabled_reason,
    created_at: fromDbTimestamp(row.created_at),
    updated_at: fromDbTimestamp(row.updated_at),
    api_version: row.api_version as WebhookEndpoint['api_version'],
  };
}

/** A list of names as stored: a JSON array, or null for all of them; a name given twice counts once. */
const storedNames = (names: readonly string[] | null | undefined) =>
  names == null ? null : JSON.stringify([...new Set(names)]);

/** A TaskFilter as stored: its JSON, or null for every task. */
const storedFilter = (filter: TaskFilter | null) =>
  filter === null ? null : JSON.stringify(filter);

/**
 * Whether an endpoint in `version` may have `filter` and `fields`: one in a version older than
 * the change that brought them has neither, as its document says.
 */
const subscribesIn = (version: ApiVersion) => !changesSince(version).includes(webhookSubscriptions);

/**
 * An endpoint of a version without `filter` and `fields` has neither: a change that would leave
 * it so is refused, naming what it sent (the version, else the subscription).
 */
function refuseSubscriptionOutOfVersion(
  endpoint: Pick<WebhookEndpointRow, 'api_version' | 'task_filter' | 'task_fields'>,
  changes: WebhookEndpointUpdate,
): void {
  if (endpoint.task_filter === null && endpoint.task_fields === null) return;
  if (subscribesIn(endpoint.api_version)) return;
  if (changes.api_version !== undefined)
    throw new InvalidFieldError(
      '/api_version',
      `cannot be ${endpoint.api_version} while the endpoint has a filter or fields: set them to null with it`,
    );
  throw new InvalidFieldError(
    changes.filter != null ? '/filter' : '/fields',
    `cannot be set on an endpoint in ${endpoint.api_version}: set its api_version to a later version with it`,
  );
}

export type WebhookEndpointsRepository = ReturnType<typeof webhookEndpointsRepository>;

export function webhookEndpointsRepository(knex: Knex) {
  const ofTenant = (db: QuerySource, tenantId: string, endpointId: string) =>
    db('webhook_endpoints').where({ webhook_endpoint_id: endpointId, tenant_id: tenantId });
  /** The endpoint's row, locked until the change commits; 412 when its version fails the condition. */
  const readForChange = async (
    trx: Transaction,
    tenantId: string,
    endpointId: string,
    condition: VersionCondition,
  ): Promise<WebhookEndpointRow | undefined> => {
    const row: WebhookEndpointRow | undefined = await lockingRead(
      knex,
      ofTenant(trx, tenantId, endpointId).first(),
    );
    if (row !== undefined && condition !== undefined && !condition.includes(row.version))
      throw new PreconditionFailedError('webhook endpoint');
    return row;
  };
  /** Writes the columns only at the version read: where a lock does not hold another node off (Galera), the change runs again. */
  const writtenAt = async (
    query: Knex.QueryBuilder,
    version: number,
    columns: Partial<WebhookEndpointRow>,
  ): Promise<void> => {
    if ((await query.where('version', version).update(columns)) === 0)
      throw new WriteConflictError();
  };

  /**
   * Takes one of the tenant's `limit` places, or throws LimitReachedError. The place is taken by
   * a conditional UPDATE of the tenant's count, not by a lock held since a read: two registrations
   * at once, on one server or on two Galera nodes, cannot both take the last place (the second
   * waits for the first's row lock, or fails certification and runs again).
   */
  async function takePlace(trx: Transaction, tenantId: string, limit: number): Promise<void> {
    const counts = () => trx('webhook_endpoint_counts').where('tenant_id', tenantId);
    if ((await counts().where('endpoints', '<', limit).increment('endpoints', 1)) === 1) return;
    const counted: { endpoints: number } | undefined = await counts().first('endpoints');
    if (counted !== undefined) {
      if (counted.endpoints >= limit) throw new LimitReachedError(limit);
      // Made by another registration after the UPDATE looked: run again, to take a place in it.
      throw new WriteConflictError();
    }
    // The tenant's first count starts from the endpoints it has: an instance of an older version
    // registers them without counting.
    const [{ n }] = await trx('webhook_endpoints').where('tenant_id', tenantId).count({ n: '*' });
    if (Number(n) >= limit) throw new LimitReachedError(limit);
    try {
      await trx('webhook_endpoint_counts').insert({
        tenant_id: tenantId,
        endpoints: Number(n) + 1,
      });
    } catch (error) {
      // Another registration made the count meanwhile: run again, to take a place in it.
      throw isDuplicateKey(error) ? new WriteConflictError() : error;
    }
  }

  return translatingErrors({
    /** Registers the endpoint if the tenant has fewer than `limit`; LimitReachedError otherwise. */
    async create(
      tenantId: string,
      endpoint: NewWebhookEndpoint,
      limit: number,
      { trx }: WriteContext,
    ): Promise<Versioned<WebhookEndpointWithSecret>> {
      await takePlace(trx, tenantId, limit);
      const now = nowForDb();
      const row: WebhookEndpointRow = {
        webhook_endpoint_id: uuidv7(),
        tenant_id: tenantId,
        url: endpoint.url,
        event_types: storedNames(endpoint.eventTypes),
        task_filter: storedFilter(endpoint.filter),
        task_fields: storedNames(endpoint.fields),
        description: endpoint.description,
        enabled: true,
        disabled_reason: null,
        secret: endpoint.secret,
        previous_secret: null,
        previous_secret_until: null,
        failing_since: null,
        created_at: now,
        updated_at: now,
        version: 1,
        api_version: endpoint.apiVersion,
      };
      await trx('webhook_endpoints').insert(row);
      return { value: { ...toEndpoint(row), secret: endpoint.secret }, version: 1 };
    },

    async find(
      tenantId: string,
      endpointId: string,
    ): Promise<Versioned<WebhookEndpoint> | undefined> {
      const row: WebhookEndpointRow | undefined = await ofTenant(
        knex,
        tenantId,
        endpointId,
      ).first();
      return row && { value: toEndpoint(row), version: row.version };
    },

    async list(
      tenantId: string,
      page: { limit: number; cursor?: string },
    ): Promise<WebhookEndpointPage> {
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
     * Applies the changes; undefined when the tenant has no such endpoint, 412 when the
     * condition fails. Disabling records `by_client` (an endpoint already disabled keeps its
     * reason); enabling clears the reason and the run of failures, so what is still pending is
     * sent again.
     */
    async update(
      tenantId: string,
      endpointId: string,
      changes: WebhookEndpointUpdate,
      condition: VersionCondition,
      { trx }: WriteContext,
    ): Promise<Versioned<WebhookEndpoint> | undefined> {
      const row = await readForChange(trx, tenantId, endpointId, condition);
      if (row === undefined) return undefined;
      const columns: Partial<WebhookEndpointRow> = {
        updated_at: nowForDb(),
        version: row.version + 1,
      };
      if (changes.url !== undefined) columns.url = changes.url;
      if (changes.event_types !== undefined) columns.event_types = storedNames(changes.event_types);
      if (changes.filter !== undefined) columns.task_filter = storedFilter(changes.filter);
      if (changes.fields !== undefined) columns.task_fields = storedNames(changes.fields);
      if (changes.description !== undefined) columns.description = changes.description;
      if (changes.api_version !== undefined) columns.api_version = changes.api_version;
      refuseSubscriptionOutOfVersion({ ...row, ...columns }, changes);
      if (changes.enabled === false && row.enabled)
        Object.assign(columns, { enabled: false, disabled_reason: 'by_client' });
      if (changes.enabled === true && !row.enabled)
        Object.assign(columns, { enabled: true, disabled_reason: null, failing_since: null });
      // Only the columns the change names are written, at the version read: a delivery's outcome
      // that disabled the endpoint meanwhile made it another version, and the change runs again.
      await writtenAt(ofTenant(trx, tenantId, endpointId), row.version, columns);
      const updated = { ...row, ...columns } as WebhookEndpointRow;
      if (changes.enabled === false && !row.enabled) updated.disabled_reason = row.disabled_reason;
      return { value: toEndpoint(updated), version: updated.version };
    },

    /** Whether any tenant has an endpoint enabled: until one has, an instance needs no delivery thread. */
    async anyEnabled(): Promise<boolean> {
      return (
        (await knex('webhook_endpoints').first('webhook_endpoint_id').where('enabled', true)) !==
        undefined
      );
    },

    /**
     * Deletes the endpoint and, by the foreign key's cascade, its deliveries, and gives its place
     * back; false when there was none, 412 when the condition fails.
     */
    async remove(
      tenantId: string,
      endpointId: string,
      condition: VersionCondition,
      { trx }: WriteContext,
    ): Promise<boolean> {
      const row = await readForChange(trx, tenantId, endpointId, condition);
      if (row === undefined) return false;
      if ((await ofTenant(trx, tenantId, endpointId).where('version', row.version).delete()) === 0)
        throw new WriteConflictError();
      await trx('webhook_endpoint_counts')
        .where('tenant_id', tenantId)
        .where('endpoints', '>', 0)
        .decrement('endpoints', 1);
      return true;
    },

    /**
     * Makes `secret` the endpoint's secret; every secret replaced in the last 24 hours keeps
     * signing (webhook-secrets.ts). False when the tenant has no such endpoint;
     * RotationsLimitError past the rotations of a day.
     */
    async rotateSecret(
      tenantId: string,
      endpointId: string,
      secret: string,
      { trx }: WriteContext,
    ): Promise<boolean> {
      const row = await readForChange(trx, tenantId, endpointId, undefined);
      if (row === undefined) return false;
      const now = Date.now();
      await writtenAt(ofTenant(trx, tenantId, endpointId), row.version, {
        ...rotation(row, secret, now),
        updated_at: toDbTimestamp(new Date(now).toISOString()),
        version: row.version + 1,
      });
      return true;
    },
  });
}
