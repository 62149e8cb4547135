import type { Knex } from 'knex';
import { IdempotencyKeyBusyError, IdempotencyKeyTakenError } from '../errors';
import { isDuplicateKey, readingAgainIfLost, translatingErrors } from './database-errors';
import { nowForDb, toDbTimestamp } from './timestamps';
import type { Transaction } from './transactions';

/** A stored answer, replayed to a retry. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body?: unknown;
}

/** The answer a key is bound to, and the request (its fingerprint) that answer was for. */
export interface BoundKey {
  fingerprint: string;
  response: StoredResponse;
}

/** A key is remembered this long; then it is free again, and removed in the background. */
export const idempotencyKeyLifetimeMs = 24 * 60 * 60 * 1000;

interface IdempotencyRow {
  fingerprint: string;
  created_at: string;
  response_status: number;
  response_headers: string;
  response_body: string;
}

const expiredBefore = () =>
  toDbTimestamp(new Date(Date.now() - idempotencyKeyLifetimeMs).toISOString());

export function idempotencyRepository(knex: Knex) {
  const byKey = (db: Knex | Transaction, tenantId: string, key: string) =>
    db('idempotency_keys').where({ tenant_id: tenantId, idempotency_key: key });

  return translatingErrors({
    /** The answer this key is bound to, unless it has expired. */
    async find(tenantId: string, key: string): Promise<BoundKey | undefined> {
      const row: IdempotencyRow | undefined = await readingAgainIfLost(() =>
        byKey(knex, tenantId, key).first(
          'fingerprint',
          'created_at',
          'response_status',
          'response_headers',
          'response_body',
        ),
      );
      if (row === undefined || row.created_at < expiredBefore()) return undefined;
      return {
        fingerprint: row.fingerprint,
        response: {
          status: row.response_status,
          headers: JSON.parse(row.response_headers),
          body: JSON.parse(row.response_body),
        },
      };
    },

    /**
     * Binds the key to this answer in the transaction that made the request's changes, so the
     * two commit together or not at all. IdempotencyKeyTakenError when another request has
     * bound it (on MySQL this waits for that request's transaction to end: a duplicate once it
     * commits, the key free if it rolls back); IdempotencyKeyBusyError when that takes too long.
     */
    async bind(
      trx: Transaction,
      tenantId: string,
      key: string,
      fingerprint: string,
      response: StoredResponse,
    ): Promise<void> {
      const row = {
        tenant_id: tenantId,
        idempotency_key: key,
        fingerprint,
        created_at: nowForDb(),
        response_status: response.status,
        response_headers: JSON.stringify(response.headers),
        response_body: JSON.stringify(response.body),
      };
      try {
        try {
          await trx('idempotency_keys').insert(row);
        } catch (error) {
          // A key bound more than a lifetime ago is free: its row makes way for this one.
          if (
            !isDuplicateKey(error) ||
            (await byKey(trx, tenantId, key).where('created_at', '<', expiredBefore()).delete()) ===
              0
          )
            throw error;
          await trx('idempotency_keys').insert(row);
        }
      } catch (error) {
        if (isDuplicateKey(error)) throw new IdempotencyKeyTakenError({ cause: error });
        if ((error as { code?: unknown }).code === 'ER_LOCK_WAIT_TIMEOUT')
          throw new IdempotencyKeyBusyError();
        throw error;
      }
    },

    /** Removes up to `batch` expired keys; how many it removed. */
    async removeExpired(batch: number): Promise<number> {
      const cutoff = expiredBefore();
      const expired: Array<{ tenant_id: string; idempotency_key: string }> = await knex(
        'idempotency_keys',
      )
        .select('tenant_id', 'idempotency_key')
        .where('created_at', '<', cutoff)
        .orderBy('created_at')
        .limit(batch);
      if (expired.length === 0) return 0;
      return knex('idempotency_keys')
        .whereIn(
          ['tenant_id', 'idempotency_key'],
          expired.map((row) => [row.tenant_id, row.idempotency_key]),
        )
        .where('created_at', '<', cutoff)
        .delete();
    },
  });
}
