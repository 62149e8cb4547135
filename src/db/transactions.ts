/**
 * A request's changes, made in one transaction: the row, its event and the answer kept for an
 * Idempotency-Key commit together or not at all.
 */
import type { Knex } from 'knex';
import { DatabaseUnavailableError } from '../errors';
import { isUnavailable, isWriteConflict } from './database-errors';

/** The transaction a request's changes go into, and the request they are recorded against. */
export interface WriteContext {
  trx: Knex.Transaction;
  requestId: string;
}

/**
 * A transaction the database aborted for a conflict (a deadlock, or on Galera a write set that
 * failed certification at commit) changed nothing and may simply run again. A few tries, spread
 * by jitter so the same two requests do not collide again in step.
 */
const conflictTries = 5;
const conflictBackoffMs = 10;

export interface TransactionOptions {
  /**
   * MySQL: READ COMMITTED rather than the default REPEATABLE READ, for work whose correctness
   * rests on conditional writes alone: its updates then lock only the rows they change, no gaps
   * between them, so rows other transactions insert meanwhile never wait for it (on Galera, an
   * applier inserting into such a gap aborts the transaction instead).
   */
  readCommitted?: boolean;
}

/** Runs `work` in a transaction of its own for the request `requestId`, again after a conflict. */
export async function inTransaction<T>(knex: Knex, requestId: string, work: (write: WriteContext) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  const config: Knex.TransactionConfig = options.readCommitted && knex.client.config.client === 'mysql2' ? { isolationLevel: 'read committed' } : {};
  for (let attempt = 1; ; attempt++) {
    try {
      return await knex.transaction((trx) => work({ trx, requestId }), config);
    } catch (error) {
      if (isWriteConflict(error) && attempt < conflictTries) {
        await new Promise((resolve) => setTimeout(resolve, conflictBackoffMs * attempt * (0.5 + Math.random())));
        continue;
      }
      throw isUnavailable(error) || isWriteConflict(error) ? new DatabaseUnavailableError(error) : error;
    }
  }
}
