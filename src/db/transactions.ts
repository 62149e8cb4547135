/**
 * A request's changes, made in one transaction: the row, its event and the answer kept for an
 * Idempotency-Key commit together or not at all.
 */
import type { Knex } from 'knex';
import { DatabaseUnavailableError } from '../errors';
import { isUnavailable, isWriteConflict } from './database-errors';
import { pipelined, type HeldStatement, type Statement } from './driver/pipelined-connection';

/** Where queries are built: knex itself (the pool), or a transaction's one connection. */
export interface QuerySource {
  (table: string): Knex.QueryBuilder;
  raw(sql: string, bindings?: readonly Knex.RawBinding[]): Knex.Raw;
}

/**
 * Queries on the one connection a transaction holds: `trx('table')` and `trx.raw`, as knex's own
 * transaction object offers them. knex's `transaction()` builds a copy of knex for each
 * transaction, which costs about as much CPU as the insert it wraps; this binds the builder to the
 * connection instead.
 */
export interface Transaction extends QuerySource {
  /**
   * A write whose answer the work does not wait for (its SQL and bindings, as a builder's
   * `toSQL()` gives them): it goes to the database with the next statement the work runs, or
   * with COMMIT, in the same round trip (see pipelined-connection). If it fails, that statement
   * fails, and the transaction with it, with the error its `failureMeans` names; an answer its
   * `answerMeans` refuses fails it too.
   */
  later(statement: HeldStatement): void;
}

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
 * transaction of two round trips that retried within that time conflicted again (1 request of 30
 * with one Idempotency-Key over two nodes answered 503 after five quick tries).
 */
const conflictTries = 8;
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
    // Applies to the next transaction only.
    const opening: Statement[] = [...(readCommitted ? [{ sql: 'SET TRANSACTION ISOLATION LEVEL READ COMMITTED', bindings: [] }] : []), { sql: 'BEGIN', bindings: [] }];
    const pipe = pipelined(knex, connection as object, opening);
    const trx: Transaction = Object.assign((table: string) => knex(table).connection(pipe.connection), {
      raw: (sql: string, bindings: readonly Knex.RawBinding[] = []) => knex.raw(sql, bindings).connection(pipe.connection),
      later: (statement: HeldStatement) => pipe.hold(statement),
    });
    try {
      const result = await work({ trx, requestId });
      // Work that sent nothing has nothing to commit.
      if (!pipe.idle) await trx.raw('COMMIT');
      return result;
    } catch (thrown) {
      const error = pipe.explain(thrown);
      pipe.drop();
      if (pipe.begun) await trx.raw('ROLLBACK').catch(() => {});
      if (!isWriteConflict(error) || attempt >= conflictTries) throw unavailableOr(error);
    } finally {
      await knex.client.releaseConnection(connection);
    }
    await new Promise((resolve) => setTimeout(resolve, conflictBackoffMs * attempt * (0.5 + Math.random())));
  }
}
