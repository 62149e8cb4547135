/**
 * Idempotency-Key on the operations that declare it: a key is either unused or bound to one
 * committed change and its answer. The request runs in a transaction that binds the key to its
 * answer before it commits, so a retry after any failure (a crash, a lost connection, a 503)
 * either replays that answer or runs for the first time.
 */
import { createHash } from 'node:crypto';
import type { Repositories } from '../db/repositories';
import type { WriteContext } from '../db/transactions';
import { IdempotencyKeyTakenError, ProblemError } from '../errors';
import type { HttpReply } from './http-reply';

/** JSON with object keys sorted, so the same body in another key order is the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : 1,
    );
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

interface KeyedRequest {
  tenantId: string;
  requestId: string;
  key: string;
  operationId: string;
  body: unknown;
}

export async function idempotently(
  repositories: Repositories,
  request: KeyedRequest,
  run: (write: WriteContext) => Promise<HttpReply>,
): Promise<HttpReply> {
  const { tenantId, key } = request;
  const fingerprint = createHash('sha256')
    .update(`${request.operationId}\n${canonical(request.body)}`)
    .digest('hex');
  for (;;) {
    const bound = await repositories.idempotency.find(tenantId, key);
    if (bound !== undefined) {
      if (bound.fingerprint !== fingerprint) {
        throw new ProblemError(
          'idempotency-key-reused',
          'This Idempotency-Key was used with another request body; use a new key for a new request.',
        );
      }
      const { status, headers, body } = bound.response;
      return { status, body, headers: { ...headers, 'Idempotent-Replayed': 'true' } };
    }
    try {
      return await repositories.inTransaction(request.requestId, async (write) => {
        const reply = await run(write);
        await repositories.idempotency.bind(write.trx, tenantId, key, fingerprint, {
          status: reply.status,
          headers: reply.headers,
          body: reply.body,
        });
        return reply;
      });
    } catch (error) {
      // Another request with this key committed first; this one's changes are gone: answer as it did.
      if (!(error instanceof IdempotencyKeyTakenError)) throw error;
    }
  }
}
