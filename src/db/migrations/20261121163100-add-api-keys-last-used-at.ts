import type { Knex } from 'knex';

// When a key last authenticated a request, at minute precision; null: never used.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (table) => {
    table.datetime('last_used_at', { precision: 3 }).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (table) => {
    table.dropColumn('last_used_at');
  });
}
