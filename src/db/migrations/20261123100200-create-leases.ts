import type { Knex } from 'knex';

// Work that one instance at a time may do (numbering events), claimed by conditional updates
// and taken over when its holder stops renewing it.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('leases', (table) => {
    table.string('name', 64).primary();
    table.string('holder', 64).notNullable();
    table.datetime('expires_at', { precision: 3 }).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('leases');
}
