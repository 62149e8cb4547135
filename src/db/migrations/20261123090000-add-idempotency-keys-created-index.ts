import type { Knex } from 'knex';

// Serves the background removal of keys older than 24 hours.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('idempotency_keys', (table) => {
    table.index(['created_at'], 'idempotency_keys_created');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('idempotency_keys', (table) => {
    table.dropIndex(['created_at'], 'idempotency_keys_created');
  });
}
