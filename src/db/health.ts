import type { Knex } from 'knex';

/**
 * Whether the database answers a query on one of the service's tables. A table, not `select 1`:
 * a Galera node outside the primary component (or still joining) answers `select 1` but refuses
 * every statement on a table (1047), so only this tells a load balancer that the instances on
 * that node cannot serve.
 */
export async function isReachable(knex: Knex): Promise<boolean> {
  try {
    await knex.raw('select 1 from knex_migrations limit 1');
    return true;
  } catch {
    return false;
  }
}
