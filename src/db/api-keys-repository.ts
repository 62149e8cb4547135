import DataLoader from 'dataloader';
import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import type { ApiKeyScope } from '../api-key-format';
import type { ApiVersion } from '../versions/versions';
import { compileSelect } from './compiled-select';
import { isConnectionLost, translatingErrors } from './database-errors';
import { fromDbTimestamp, nowForDb, toDbTimestamp, type DbTimestamp } from './timestamps';

/** Who a request's key speaks for. */
export interface Principal {
  keyId: string;
  tenantId: string;
  scopes: ApiKeyScope[];
  /** The version the key answers in when a request names none: its tenant's, or its own pin. */
  apiVersion: ApiVersion;
}

interface ApiKeySummary {
  key_id: string;
  tenant: string;
  scopes: ApiKeyScope[];
  api_version: ApiVersion;
  /** Pinned by an operator, rather than following its tenant's version. */
  api_version_pinned: boolean;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

interface ApiKeyListRow {
  key_id: string;
  tenant: string;
  scopes: string;
  api_version: ApiVersion;
  api_version_pinned: number | boolean;
  created_at: DbTimestamp;
  last_used_at: DbTimestamp | null;
  expires_at: DbTimestamp | null;
  revoked_at: DbTimestamp | null;
}

const parseScopes = (scopes: string) => scopes.split(',') as ApiKeyScope[];
const fromNullable = (value: DbTimestamp | null) =>
  value === null ? null : fromDbTimestamp(value);

/** Last use is recorded at most this often per key, so authentication stays a read. */
const lastUseResolutionMs = 60_000;

/**
 * Key lookups running at once; those asked for meanwhile wait, and go together in one query. One
 * is enough: under load the queries grow rather than multiply.
 */
const lookupsAtOnce = 1;
/** The most keys one query looks up. */
const lookupBatch = 100;

type ActiveKeyRow = { key_id: string; tenant_id: string; scopes: string; api_version: ApiVersion };
const toPrincipal = (row: ActiveKeyRow): Principal => ({
  keyId: row.key_id,
  tenantId: row.tenant_id,
  scopes: parseScopes(row.scopes),
  apiVersion: row.api_version,
});

export type ApiKeysRepository = ReturnType<typeof apiKeysRepository>;

export function apiKeysRepository(knex: Knex) {
  const lastUseWritten = new Map<string, number>();
  const active = (query: Knex.QueryBuilder, now: string) =>
    query
      .whereNull('revoked_at')
      .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now));
  const selectActive = compileSelect(knex, ['keyHash', 'now'], ({ keyHash, now }) =>
    active(
      knex('api_keys')
        .first('key_id', 'tenant_id', 'scopes', 'api_version')
        .where('key_hash', keyHash),
      now,
    ),
  );
  /** A lookup whose connection was lost goes once more: a batch carries many requests' keys. */
  const lookUp = async (keyHashes: readonly string[]): Promise<Array<Principal | undefined>> => {
    try {
      return await lookUpOnce(keyHashes);
    } catch (error) {
      if (!isConnectionLost(error)) throw error;
      return lookUpOnce(keyHashes);
    }
  };
  const lookUpOnce = async (
    keyHashes: readonly string[],
  ): Promise<Array<Principal | undefined>> => {
    const now = nowForDb();
    if (keyHashes.length === 1) {
      const [row] = await selectActive<ActiveKeyRow>({ keyHash: keyHashes[0], now });
      return [row && toPrincipal(row)];
    }
    const rows: Array<ActiveKeyRow & { key_hash: string }> = await active(
      knex('api_keys')
        .select('key_id', 'tenant_id', 'scopes', 'api_version', 'key_hash')
        .whereIn('key_hash', [...new Set(keyHashes)]),
      now,
    );
    const found = new Map(rows.map((row) => [row.key_hash, toPrincipal(row)]));
    return keyHashes.map((keyHash) => found.get(keyHash));
  };
  /**
   * Lookups asked for while `lookupsAtOnce` run wait, and go together in one query as one ends:
   * a wake-up of many long polls, which all ask again at once, costs a few reads, not one each.
   * Nothing is remembered between queries, and a request's key is read by a query that starts
   * after the request came, so a key revoked before it came is refused.
   */
  let lookingUp = 0;
  const waiting: Array<() => void> = [];
  const lookups = new DataLoader<string, Principal | undefined>(
    async (keyHashes) => {
      lookingUp++;
      try {
        return await lookUp(keyHashes);
      } finally {
        lookingUp--;
        waiting.shift()?.();
      }
    },
    {
      cache: false,
      maxBatchSize: lookupBatch,
      // At the soonest after this turn of the event loop: the keys of every request read in it go together.
      batchScheduleFn: (dispatch) =>
        lookingUp + waiting.length < lookupsAtOnce
          ? setImmediate(dispatch)
          : waiting.push(dispatch),
    },
  );

  // Long polls ask when they wake, many at once: those of one turn of the event loop share a query.
  const stillActive = new DataLoader<string, boolean>(
    async (keyIds) => {
      const rows: Array<{ key_id: string }> = await active(
        knex('api_keys')
          .select('key_id')
          .whereIn('key_id', [...new Set(keyIds)]),
        nowForDb(),
      );
      const found = new Set(rows.map((row) => row.key_id));
      return keyIds.map((keyId) => found.has(keyId));
    },
    {
      cache: false,
      maxBatchSize: lookupBatch,
      batchScheduleFn: (dispatch) => setImmediate(dispatch),
    },
  );

  return translatingErrors({
    /** Whether the key is still neither revoked nor expired. */
    isActive: (keyId: string): Promise<boolean> => stillActive.load(keyId),

    /**
     * Stores a key by its hash; returns the new key's id. It answers in its tenant's version
     * unless `apiVersion` pins it to another.
     */
    async insert(
      tenantId: string,
      keyHash: string,
      scopes: ApiKeyScope[],
      options: { apiVersion?: ApiVersion; expiresAt?: Date; trx?: Knex.Transaction } = {},
    ): Promise<string> {
      const keyId = uuidv7();
      const db = options.trx ?? knex;
      await db('api_keys').insert({
        key_id: keyId,
        tenant_id: tenantId,
        key_hash: keyHash,
        scopes: scopes.join(','),
        api_version:
          options.apiVersion ??
          db.raw('(select api_version from tenants where tenant_id = ?)', [tenantId]),
        api_version_pinned: options.apiVersion !== undefined,
        created_at: nowForDb(),
        expires_at: options.expiresAt ? toDbTimestamp(options.expiresAt.toISOString()) : null,
        revoked_at: null,
      });
      return keyId;
    },

    /** The principal of a key that exists and is neither revoked nor expired. */
    findActive(keyHash: string): Promise<Principal | undefined> {
      return lookups.load(keyHash);
    },

    /** A page of the active keys' hashes, in key id order, after `afterKeyId` ('' for the first). */
    async activeHashes(
      afterKeyId: string,
      limit: number,
    ): Promise<Array<{ key_id: string; key_hash: string }>> {
      const now = nowForDb();
      return knex('api_keys')
        .select('key_id', 'key_hash')
        .where('key_id', '>', afterKeyId)
        .whereNull('revoked_at')
        .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now))
        .orderBy('key_id')
        .limit(limit);
    },

    /** The hashes of the active keys created at or after `since`. */
    async activeHashesCreatedSince(since: Date): Promise<string[]> {
      const now = nowForDb();
      const rows: Array<{ key_hash: string }> = await knex('api_keys')
        .select('key_hash')
        .where('created_at', '>=', toDbTimestamp(since.toISOString()))
        .whereNull('revoked_at')
        .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now));
      return rows.map((row) => row.key_hash);
    },

    /** Notes that the key was just used; writes at most once a minute per key and instance. */
    async recordUse(keyId: string): Promise<void> {
      const now = Date.now();
      if (now - (lastUseWritten.get(keyId) ?? 0) < lastUseResolutionMs) return;
      lastUseWritten.set(keyId, now);
      await knex('api_keys').where('key_id', keyId).update({ last_used_at: nowForDb() });
    },

    async count(): Promise<number> {
      const [{ n }] = await knex('api_keys').count({ n: '*' });
      return Number(n);
    },

    async list(): Promise<ApiKeySummary[]> {
      const rows: ApiKeyListRow[] = await knex('api_keys')
        .join('tenants', 'tenants.tenant_id', 'api_keys.tenant_id')
        .select(
          'api_keys.key_id',
          'tenants.name as tenant',
          'api_keys.scopes',
          'api_keys.api_version',
          'api_keys.api_version_pinned',
          'api_keys.created_at',
          'api_keys.last_used_at',
          'api_keys.expires_at',
          'api_keys.revoked_at',
        )
        .orderBy([{ column: 'api_keys.created_at' }, { column: 'api_keys.key_id' }]);
      return rows.map((row) => ({
        key_id: row.key_id,
        tenant: row.tenant,
        scopes: parseScopes(row.scopes),
        api_version: row.api_version,
        api_version_pinned: Boolean(row.api_version_pinned),
        created_at: fromDbTimestamp(row.created_at),
        last_used_at: fromNullable(row.last_used_at),
        expires_at: fromNullable(row.expires_at),
        revoked_at: fromNullable(row.revoked_at),
      }));
    },

    /** Pins a key to a version, whatever its tenant's; false when there is no such key. */
    async setApiVersion(keyId: string, apiVersion: ApiVersion): Promise<boolean> {
      const updated = await knex('api_keys')
        .where('key_id', keyId)
        .update({ api_version: apiVersion, api_version_pinned: true });
      return updated > 0;
    },

    /** Revokes a key that is not yet revoked; false when there is no such key. */
    async revoke(keyId: string): Promise<boolean> {
      const updated = await knex('api_keys')
        .where('key_id', keyId)
        .whereNull('revoked_at')
        .update({ revoked_at: nowForDb() });
      return updated > 0;
    },
  });
}
