/**
 * A transaction on a connection taken from knex's pool itself, its statements built by knex and
 * sent through a pipelined connection. knex's `transaction()` builds a copy of knex for each
 * transaction, which costs about as much CPU as the insert it wraps; this binds the builder to the
 * connection instead.
 */
import type { Knex } from 'knex';
import type { Attempt, Transaction } from './attempt';
import { pipelined, type HeldStatement, type Statement } from './pipelined-connection';

/** knex's pool, as its runner uses it: not part of knex's documented API. */
interface PoolClient {
  acquireConnection(): Promise<object>;
  releaseConnection(connection: object): Promise<unknown>;
}

export async function pipelinedTransaction(knex: Knex, readCommitted: boolean): Promise<Attempt> {
  const client = knex.client as PoolClient;
  const connection = await client.acquireConnection();
  // Applies to the next transaction only.
  const opening: Statement[] = [
    ...(readCommitted
      ? [{ sql: 'SET TRANSACTION ISOLATION LEVEL READ COMMITTED', bindings: [] }]
      : []),
    { sql: 'BEGIN', bindings: [] },
  ];
  const pipe = pipelined(knex, connection, opening);
  const trx: Transaction = Object.assign(
    (table: string) => knex(table).connection(pipe.connection),
    {
      raw: (sql: string, bindings: readonly Knex.RawBinding[] = []) =>
        knex.raw(sql, bindings).connection(pipe.connection),
      later: (statement: HeldStatement) => pipe.hold(statement),
    },
  );
  return {
    trx,
    async commit() {
      // Work that sent nothing has nothing to commit.
      if (!pipe.idle) await trx.raw('COMMIT');
    },
    async rollBack(thrown) {
      const error = pipe.explain(thrown);
      pipe.drop();
      if (pipe.begun) await trx.raw('ROLLBACK').catch(() => {});
      return error;
    },
    release: async () => {
      await client.releaseConnection(connection);
    },
  };
}
