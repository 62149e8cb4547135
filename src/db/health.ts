import type { Knex } from 'knex';

/**
 * The readiness query: a read of the smallest table the service has. On a Galera node the
 * sessions read causally (knex.ts), and a causal read waits while the cluster pauses its commits
 * (a node joining, flow control); this one does not, so a pause of a few seconds does not take
 * every instance out of the load balancer at once. It still fails (1047) on a node outside the
 * primary component or not ready: a table is read (`select 1` alone would answer there). MySQL
 * and SQLite read the MariaDB part as a comment; MariaDB without Galera knows the variable too.
 */
const readinessQuery =
  '/*M! SET STATEMENT wsrep_sync_wait = 0 FOR */ select 1 from knex_migrations_lock limit 1';

/** Whether the database answers a trivial query (see readinessQuery). */
export async function isReachable(knex: Knex): Promise<boolean> {
  try {
    await knex.raw(readinessQuery);
    return true;
  } catch {
    return false;
  }
}
