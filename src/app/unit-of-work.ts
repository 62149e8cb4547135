/**
 * The unit of work of every change a client asks for. Its writes, its event and, with an
 * Idempotency-Key, the answer bound to that key commit in one transaction or not at all; a
 * transaction the database aborts for a conflict runs again (db/transactions.ts); a key already
 * bound answers as it did the first time, so a retry after any failure (a crash, a lost
 * connection, a 503) either replays that answer or runs for the first time; and once a change has
 * committed, the numbering of its event is woken rather than left to its next look.
 */
import type { StoredResponse } from '../db/idempotency-repository';
import type { CoreRepositories } from '../db/repositories';
import type { WriteContext } from '../db/transactions';
import { IdempotencyKeyReusedError, IdempotencyKeyTakenError } from '../errors';
import { fingerprint } from './request-fingerprint';

/** A change asked for: who asks, under which request, and what a key would be bound to. */
export interface Change {
  tenantId: string;
  requestId: string;
  operationId: string;
  body: unknown;
  /** The operation's path parameters (which endpoint a rotation is of). */
  pathParameters?: Record<string, string>;
  idempotencyKey?: string;
  /** The API version the request is made in: a key is bound to it too. */
  apiVersion?: string;
}

/** What a change answers, kept with its key as it was given. */
export type Answer = StoredResponse;

export interface Outcome<A extends Answer = Answer> {
  answer: A | Answer;
  /** The answer is the one bound to the key earlier: nothing ran this time. */
  replayed: boolean;
}

export interface UnitOfWork {
  run<A extends Answer>(
    change: Change,
    work: (write: WriteContext) => Promise<A>,
  ): Promise<Outcome<A>>;
}

export function createUnitOfWork(
  repositories: Pick<CoreRepositories, 'inTransaction' | 'idempotency'>,
  options: { onCommitted?: () => void } = {},
): UnitOfWork {
  const committed = <T>(result: T) => {
    options.onCommitted?.();
    return result;
  };
  return {
    async run(change, work) {
      const key = change.idempotencyKey;
      if (key === undefined) {
        const answer = await repositories.inTransaction(change.requestId, work);
        return committed({ answer, replayed: false });
      }
      const { tenantId } = change;
      const print = fingerprint(
        change.operationId,
        change.body,
        change.pathParameters,
        change.apiVersion,
      );
      let taken: IdempotencyKeyTakenError | undefined;
      for (;;) {
        const bound = await repositories.idempotency.find(tenantId, key);
        if (bound !== undefined) {
          if (bound.fingerprint !== print) throw new IdempotencyKeyReusedError();
          return { answer: bound.response, replayed: true };
        }
        // Said taken, yet bound to nothing: the duplicate was not the key's, and is the fault it is without a key.
        if (taken) throw taken.cause;
        try {
          const answer = await repositories.inTransaction(change.requestId, async (write) => {
            const answer = await work(write);
            const { status, headers, body } = answer;
            await repositories.idempotency.bind(write.trx, tenantId, key, print, {
              status,
              headers,
              body,
            });
            return answer;
          });
          return committed({ answer, replayed: false });
        } catch (error) {
          // Another request with this key committed first and this one's changes are gone: it
          // answers as that one did.
          if (!(error instanceof IdempotencyKeyTakenError)) throw error;
          taken = error;
        }
      }
    },
  };
}
