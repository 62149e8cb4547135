import type { Knex } from 'knex';

/*
 * Which instance serves an endpoint is a lease in `leases` (src/db/endpoint-serving.ts), not a
 * column of the endpoint's row: that row is the parent of every attempt, and writing it to renew
 * serving would abort plannings and outcomes on the other nodes of a Galera cluster. Its two
 * columns go. SQLite drops each with its own ALTER TABLE, which keeps the table, its index and the
 * attempts' foreign key as they are: knex's dropColumn copies the table into a new one and drops
 * the old, and in a migration's transaction foreign keys stay on, so dropping the old table
 * deletes every attempt (ON DELETE CASCADE).
 */
const columns = ['served_by', 'served_until'];

export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client === 'mysql2') {
    await knex.schema.alterTable('webhook_endpoints', (table) => {
      table.dropColumns(...columns);
    });
    return;
  }
  for (const column of columns)
    await knex.raw('ALTER TABLE ?? DROP COLUMN ??', ['webhook_endpoints', column]);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (table) => {
    table.string('served_by', 64).nullable();
    table.datetime('served_until', { precision: 3 }).nullable();
  });
}
