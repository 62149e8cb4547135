/**
 * A request's changes, made in one transaction: the row, its event and the answer kept for an
 * Idempotency-Key commit together or not at all.
 */
import type { Knex } from 'knex';
import { DatabaseUnavailableError } from '../errors';
import { isUnavailable, isWriteConflict } from './database-errors';

/**
 * Queries on the one connection a transaction holds: `trx('table')` and `trx.raw`, as knex's own
 * transaction object offers them. knex's `transaction()` builds a copy of knex for each
 * transaction, which cost about 200 µs of CPU a transaction (433 against 228 µs for one insert
 * between BEGIN and COMMIT, measured in process); this binds the builder to the connection instead.
 */
export interface Transaction {
  (table: string): Knex.QueryBuilder;
  raw(sql: string, bindings?: readonly Knex.RawBinding[]): Knex.Raw;
}

/** The transaction a request's changes go into, and the request they are recorded against. */
export interface WriteContext {
  trx: Transaction;
  requestId: string;
}

/**
 * A transaction the database aborted for a conflict (a deadlock, or on Galera a write set that
 * failed certification at commit) changed nothing and may simply run again. A few tries, spread
 * by jitter so the same two requests do not collide again in step.
 */
const conflictTries = 5;
const conflictBackoffMs = 10;

const unavailableOr = (error: unknown) => (isUnavailable(error) || isWriteConflict(error) ? new DatabaseUnavailableError(error) : error);

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
  const readCommitted = options.readCommitted === true && knex.client.config.client === 'mysql2';
  for (let attempt = 1; ; attempt++) {
    let connection: unknown;
    try {
      connection = await knex.client.acquireConnection();
    } catch (error) {
      throw unavailableOr(error);
    }
    const trx = Object.assign((table: string) => knex(table).connection(connection), {
      raw: (sql: string, bindings: readonly Knex.RawBinding[] = []) => knex.raw(sql, bindings).connection(connection),
    });
    try {
      // Applies to the next transaction only.
      if (readCommitted) await trx.raw('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
      await trx.raw('BEGIN');
      const result = await work({ trx, requestId });
      await trx.raw('COMMIT');
      return result;
    } catch (error) {
      await trx.raw('ROLLBACK').catch(() => {});
      if (!isWriteConflict(error) || attempt >= conflictTries) throw unavailableOr(error);
    } finally {
      await knex.client.releaseConnection(connection);
    }
    await new Promise((resolve) => setTimeout(resolve, conflictBackoffMs * attempt * (0.5 + Math.random())));
  }
}
