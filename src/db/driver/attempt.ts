/**
 * What a transaction offers the work in it, whichever driver path runs it (knex's own, or the
 * pipelined one): kept apart from transactions.ts so that the driver imports nothing above it.
 */
import type { Knex } from 'knex';
import type { HeldStatement } from './pipelined-connection';

/** Where queries are built: knex itself (the pool), or a transaction's one connection. */
export interface QuerySource {
  (table: string): Knex.QueryBuilder;
  raw(sql: string, bindings?: readonly Knex.RawBinding[]): Knex.Raw;
}

/** Queries on the one connection a transaction holds: `trx('table')` and `trx.raw`, as knex's own transaction object offers them. */
export interface Transaction extends QuerySource {
  /**
   * A write whose answer the work need not wait for (its SQL and bindings, as a builder's
   * `toSQL()` gives them): it goes to the database with the next statement the work runs, or
   * with COMMIT, in the same round trip (see driver/pipelined-connection), and there is nothing
   * to await. If it fails, that statement fails, and the transaction with it, with the error its
   * `failureMeans` names; an answer its `answerMeans` refuses fails it too. With LIBRARY_SHIMS=off
   * it goes at once, in a round trip of its own, and the promise answered fails with that error:
   * the work awaits it, so that nothing it sends next runs after a failure that ended the
   * transaction (a deadlock), outside of it.
   */
  later(statement: HeldStatement): Promise<void> | void;
}

/** One attempt at a transaction, begun: the queries for the work, and the attempt's ends. */
export interface Attempt {
  trx: Transaction;
  commit(): Promise<void>;
  /** Rolls back what was sent, and answers what the work's failure `thrown` means. */
  rollBack(thrown: unknown): Promise<unknown>;
  /** Gives the connection back, however the attempt ended. */
  release(): Promise<void>;
}
