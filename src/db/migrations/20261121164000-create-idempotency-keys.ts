import type { Knex } from 'knex';

// The first answer to each Idempotency-Key, per tenant, so a retry replays it.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('idempotency_keys', (table) => {
    table
      .specificType('tenant_id', 'char(36)')
      .notNullable()
      .references('tenant_id')
      .inTable('tenants');
    table.string('idempotency_key', 255).notNullable();
    // SHA-256 of the operation and its body: what a retry must repeat to be replayed.
    table.specificType('fingerprint', 'char(64)').notNullable();
    table.datetime('created_at', { precision: 3 }).notNullable();
    // Null while the first request runs.
    table.integer('response_status').nullable();
    table.text('response_headers').nullable();
    table.text('response_body', 'mediumtext').nullable();
    table.primary(['tenant_id', 'idempotency_key']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('idempotency_keys');
}
