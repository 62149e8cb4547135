import type { Knex } from 'knex';

/** Whether the database answers a trivial query. */
export async function isReachable(knex: Knex): Promise<boolean> {
  try {
    await knex.raw('select 1');
    return true;
  } catch {
    return false;
  }
}
