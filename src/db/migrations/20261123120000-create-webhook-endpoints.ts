import type { Knex } from 'knex';

// Where a tenant's events are pushed, with the secret that signs them (a signing key the service
// needs in clear, not a password).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_endpoints', (table) => {
    table.specificType('webhook_endpoint_id', 'char(36)').primary();
    table
      .specificType('tenant_id', 'char(36)')
      .notNullable()
      .references('tenant_id')
      .inTable('tenants');
    table.string('url', 2000).notNullable();
    // A JSON array of event types, or null for every type.
    table.string('event_types', 200).nullable();
    table.string('description', 500).notNullable();
    table.boolean('enabled').notNullable();
    // by_client, gone or failing while not enabled; null while enabled.
    table.string('disabled_reason', 16).nullable();
    table.string('secret', 64).notNullable();
    // After a rotation, the secret before it signs beside the new one until previous_secret_until.
    table.string('previous_secret', 64).nullable();
    table.datetime('previous_secret_until', { precision: 3 }).nullable();
    // When the endpoint's current run of failed attempts began; null after a success.
    table.datetime('failing_since', { precision: 3 }).nullable();
    // The instance that makes the endpoint's deliveries, until served_until: one at a time, so
    // its cap on deliveries in flight holds over every instance. Claimed and renewed by
    // conditional updates in the transactions that claim the endpoint's attempts.
    table.string('served_by', 64).nullable();
    table.datetime('served_until', { precision: 3 }).nullable();
    table.datetime('created_at', { precision: 3 }).notNullable();
    table.datetime('updated_at', { precision: 3 }).notNullable();
    // The tenant's list (keyset on created_at, id), the fan-out's look-up by tenant, and the foreign key.
    table.index(
      ['tenant_id', 'created_at', 'webhook_endpoint_id'],
      'webhook_endpoints_tenant_created',
    );
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_endpoints');
}
