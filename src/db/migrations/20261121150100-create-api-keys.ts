import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('api_keys', (table) => {
    table.specificType('key_id', 'char(36)').primary();
    table
      .specificType('tenant_id', 'char(36)')
      .notNullable()
      .references('tenant_id')
      .inTable('tenants');
    // SHA-256 of the key, hex: keys carry 256 random bits, so a fast hash is safe and the
    // key itself is never stored.
    table.specificType('key_hash', 'char(64)').notNullable().unique();
    table.string('scopes', 50).notNullable();
    table.datetime('created_at', { precision: 3 }).notNullable();
    table.datetime('revoked_at', { precision: 3 }).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_keys');
}
