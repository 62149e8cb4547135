import type { Knex } from 'knex';
import { isDuplicateKey, translatingErrors } from './database-errors';
import { nowForDb, toDbTimestamp } from './timestamps';

/** A stored answer, replayed to a retry. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** What a request with an Idempotency-Key may do. */
export type Claim =
  | { outcome: 'run' }
  | { outcome: 'replay'; response: StoredResponse }
  | { outcome: 'in-progress' }
  | { outcome: 'reused-with-another-request' };

/** A key is remembered this long. */
const keptForMs = 24 * 60 * 60 * 1000;
/** A first request that has not finished in this long is taken to have died with its instance. */
const abandonedAfterMs = 60 * 1000;

export function idempotencyRepository(knex: Knex) {
  const byKey = (db: Knex | Knex.Transaction, tenantId: string, key: string) => db('idempotency_keys').where({ tenant_id: tenantId, idempotency_key: key });
  const before = (ms: number) => toDbTimestamp(new Date(Date.now() - ms).toISOString());

  return translatingErrors({
    /** Takes the key for this request, or says why not. */
    async claim(tenantId: string, key: string, fingerprint: string): Promise<Claim> {
      for (;;) {
        try {
          await knex('idempotency_keys').insert({ tenant_id: tenantId, idempotency_key: key, fingerprint, created_at: nowForDb() });
          return { outcome: 'run' };
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
        }
        const existing = await byKey(knex, tenantId, key).first();
        if (existing === undefined) continue; // released meanwhile: try again
        const expired = existing.created_at < before(keptForMs);
        const abandoned = existing.response_status === null && existing.created_at < before(abandonedAfterMs);
        if (expired || abandoned) {
          await byKey(knex, tenantId, key).where('created_at', existing.created_at).delete();
          continue;
        }
        if (existing.fingerprint !== fingerprint) return { outcome: 'reused-with-another-request' };
        if (existing.response_status === null) return { outcome: 'in-progress' };
        return {
          outcome: 'replay',
          response: { status: existing.response_status, headers: JSON.parse(existing.response_headers), body: JSON.parse(existing.response_body) },
        };
      }
    },

    /** Keeps the answer for retries. */
    async complete(tenantId: string, key: string, response: StoredResponse): Promise<void> {
      await byKey(knex, tenantId, key).update({
        response_status: response.status,
        response_headers: JSON.stringify(response.headers),
        response_body: JSON.stringify(response.body),
      });
    },

    /** Frees the key of a request that failed, so a retry runs it afresh. */
    async release(tenantId: string, key: string): Promise<void> {
      await byKey(knex, tenantId, key).whereNull('response_status').delete();
    },
  });
}
