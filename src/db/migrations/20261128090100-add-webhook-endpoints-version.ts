import type { Knex } from 'knex';

// The endpoint's version, which its ETag shows: every change a client can see adds one.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (table) => {
    table.integer('version').notNullable().defaultTo(1);
  });
}

// Not knex's dropColumn: on SQLite it copies the table, and the copy's drop of the old one
// cascades to every attempt of every endpoint. Both engines drop a column in place.
export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhook_endpoints DROP COLUMN version');
}
