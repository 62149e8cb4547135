import type { Knex } from 'knex';

/**
 * Whether the database answers a trivial query. On a Galera node the session reads causally
 * (see knex.ts), so even this fails (1047) while the node is outside the primary component or
 * still joining: the instances on it report themselves not ready.
 */
export async function isReachable(knex: Knex): Promise<boolean> {
  try {
    await knex.raw('select 1');
    return true;
  } catch {
    return false;
  }
}
