/**
 * A request's changes, made in one transaction: the row, its event and the answer kept for an
 * Idempotency-Key commit together or not at all.
 */
import type { Knex } from 'knex';
import { libraryShims } from '../config';
import { DatabaseUnavailableError } from '../errors';
import { isConnectionLost, isUnavailable, isWriteConflict } from './database-errors';
import type { Attempt, Transaction } from './driver/attempt';
import type { HeldStatement } from './driver/pipelined-connection';
import { pipelinedTransaction } from './driver/pipelined-transaction';

export type { Attempt, QuerySource, Transaction } from './driver/attempt';

/**
 * Begins an attempt through knex's own API: BEGIN at once, each statement, held ones too, in a
 * round trip of its own, and knex's own commit and rollback.
 */
async function knexTransaction(knex: Knex, readCommitted: boolean): Promise<Attempt> {
  const transaction = await knex.transaction(
    readCommitted ? { isolationLevel: 'read committed' } : {},
  );
  const held: Array<Promise<void>> = [];
  const later = (statement: HeldStatement) => {
    const sent = transaction.raw(statement.sql, [...statement.bindings] as Knex.RawBinding[]).then(
      (answer: unknown) => {
        const refused = statement.answerMeans?.(answer);
        if (refused !== undefined) throw refused;
      },
      (error: unknown) => {
        throw statement.failureMeans?.(error) ?? error;
      },
    );
    // Handled here too: work that does not await it learns of its failure at COMMIT.
    sent.catch(() => {});
    held.push(sent);
    return sent;
  };
  const firstFailure = async () => {
    for (const sent of held) {
      const failure = await sent.then(
        () => undefined,
        (error: unknown) => error,
      );
      if (failure !== undefined) return failure;
    }
    return undefined;
  };
  return {
    trx: Object.assign((table: string) => transaction(table), {
      raw: (sql: string, bindings: readonly Knex.RawBinding[] = []) =>
        transaction.raw(sql, bindings),
      later,
    }),
    async commit() {
      const failure = await firstFailure();
      if (failure !== undefined) throw failure;
      await transaction.commit();
      // knex answers a COMMIT the database refused here, not from commit().
      await transaction.executionPromise;
    },
    async rollBack(thrown) {
      const failure = (await firstFailure()) ?? thrown;
      if (!transaction.isCompleted()) await transaction.rollback().catch(() => {});
      return failure;
    },
    release: async () => {},
  };
}

/** The one place LIBRARY_SHIMS picks how a transaction reaches the database. */
const begin = libraryShims ? pipelinedTransaction : knexTransaction;

/** The transaction a request's changes go into, and the request they are recorded against. */
export interface WriteContext {
  trx: Transaction;
  requestId: string;
}

/**
 * A transaction the database aborted for a conflict (a deadlock, or on Galera a write set that
 * failed certification at commit) changed nothing and may simply run again. A few tries, spread
 * by jitter so the same two requests do not collide again in step, and over a few hundred ms
 * in all: on Galera the winner's write set reaches this node a little after its commit, and a
 * transaction that retries within that time conflicts again.
 */
const conflictTries = 8;
const conflictBackoffMs = 10;
/**
 * A transaction whose connection ended before its COMMIT was sent (a proxy cut the session, as
 * HAProxy does to a node taken out of rotation) committed nothing: the server rolled it back.
 * It runs again, on another connection, a few times at most; one whose COMMIT was sent may have
 * committed, and stays unavailable.
 */
const lostConnectionTries = 3;

const unavailableOr = (error: unknown) =>
  isUnavailable(error) || isWriteConflict(error) ? new DatabaseUnavailableError(error) : error;

export interface TransactionOptions {
  /**
   * MySQL: READ COMMITTED rather than the default REPEATABLE READ, for work whose correctness
   * rests on conditional writes alone: its updates then lock only the rows they change, no gaps
   * between them, so rows other transactions insert meanwhile never wait for it (on Galera, an
   * applier inserting into such a gap aborts the transaction instead).
   */
  readCommitted?: boolean;
  /** A request's transaction: its conflicts are counted for /metrics (requestConflicts). */
  forRequest?: boolean;
}

/**
 * Conflicts requests' transactions met, per database: what a Galera cluster's contention costs
 * the clients (each one ran again), apart from the background work's own races.
 */
const requestConflictCounts = new WeakMap<Knex, number>();

/** How many times a request's transaction on this database was aborted for a conflict. */
export const requestConflicts = (knex: Knex): number => requestConflictCounts.get(knex) ?? 0;

/** Runs `work` in a transaction of its own for the request `requestId`, again after a conflict. */
export async function inTransaction<T>(
  knex: Knex,
  requestId: string,
  work: (write: WriteContext) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const readCommitted = options.readCommitted === true && knex.client.config.client === 'mysql2';
  let lostConnections = 0;
  for (let attempt = 1; ; attempt++) {
    let begun: Attempt;
    try {
      begun = await begin(knex, readCommitted);
    } catch (error) {
      throw unavailableOr(error);
    }
    let committing = false;
    try {
      const result = await work({ trx: begun.trx, requestId });
      committing = true;
      await begun.commit();
      return result;
    } catch (thrown) {
      const error = await begun.rollBack(thrown);
      // A repository's statement answers an outage as DatabaseUnavailableError, the driver's error its cause.
      const cause = error instanceof DatabaseUnavailableError ? error.cause : error;
      const conflict = isWriteConflict(error);
      if (conflict && options.forRequest)
        requestConflictCounts.set(knex, requestConflicts(knex) + 1);
      const lostBeforeCommit =
        !committing && isConnectionLost(cause) && ++lostConnections < lostConnectionTries;
      if (!(conflict || lostBeforeCommit) || attempt >= conflictTries) throw unavailableOr(error);
    } finally {
      await begun.release();
    }
    await new Promise((resolve) =>
      setTimeout(resolve, conflictBackoffMs * attempt * (0.5 + Math.random())),
    );
  }
}
