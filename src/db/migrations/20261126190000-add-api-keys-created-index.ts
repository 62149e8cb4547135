import type { Knex } from 'knex';

// Serves each instance's reading of the keys created lately, which a flood of unknown keys asks for.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (table) => {
    table.index(['created_at'], 'api_keys_created');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (table) => {
    table.dropIndex(['created_at'], 'api_keys_created');
  });
}
