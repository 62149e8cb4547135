import type { Knex } from 'knex';

// Every secret a rotation replaced that still signs, newest first (JSON); previous_secret keeps
// the newest alone for instances of the version before.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (table) => {
    table.text('retired_secrets').nullable();
  });
}

// Not knex's dropColumn: on SQLite it copies the table, and the copy's drop of the old one
// cascades to every attempt of every endpoint. Both engines drop a column in place.
export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhook_endpoints DROP COLUMN retired_secrets');
}
