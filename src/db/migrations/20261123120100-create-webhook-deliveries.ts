import type { Knex } from 'knex';

// One row per delivery attempt of an event to an endpoint: planned (pending, due at
// next_attempt_at), claimed by an instance for a while (claimed_by, lease_until), then made
// (succeeded or failed, with the answer).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_deliveries', (table) => {
    table.specificType('delivery_id', 'char(36)').primary();
    table
      .specificType('webhook_endpoint_id', 'char(36)')
      .notNullable()
      .references('webhook_endpoint_id')
      .inTable('webhook_endpoints')
      .onDelete('CASCADE');
    // No foreign key: events go by their own retention.
    table.specificType('event_id', 'char(36)').notNullable();
    table.string('event_type', 32).notNullable();
    table.integer('attempt').notNullable();
    table.string('status', 16).notNullable();
    table.integer('response_status').nullable();
    table.string('error', 200).nullable();
    table.integer('duration_ms').nullable();
    table.datetime('created_at', { precision: 3 }).notNullable();
    table.datetime('next_attempt_at', { precision: 3 }).nullable();
    // The claim that is making the attempt, until lease_until; both null otherwise.
    table.string('claimed_by', 64).nullable();
    table.datetime('lease_until', { precision: 3 }).nullable();
    // An endpoint's due attempts, oldest first.
    table.index(
      ['webhook_endpoint_id', 'status', 'next_attempt_at', 'delivery_id'],
      'webhook_deliveries_due',
    );
    // The delivery log, newest first (keyset on created_at, id).
    table.index(['webhook_endpoint_id', 'created_at', 'delivery_id'], 'webhook_deliveries_log');
    // Retention: the oldest first.
    table.index(['created_at'], 'webhook_deliveries_created');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_deliveries');
}
