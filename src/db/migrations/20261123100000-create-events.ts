import type { Knex } from 'knex';

// Every change, written in the change's own transaction; `sequence` is given after it commits.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('events', (table) => {
    table.specificType('event_id', 'char(36)').primary();
    table
      .specificType('tenant_id', 'char(36)')
      .notNullable()
      .references('tenant_id')
      .inTable('tenants');
    // Null until numbered: readers see only numbered events.
    table.bigInteger('sequence').nullable();
    table.string('type', 32).notNullable();
    // No foreign key: a deleted project's events outlive it.
    table.specificType('project_id', 'char(36)').notNullable();
    table.string('request_id', 128).notNullable();
    table.text('data', 'mediumtext').notNullable();
    table.datetime('created_at', { precision: 3 }).notNullable();
    // The feed (a tenant's events by sequence), and the guard against a number given twice.
    table.unique(['tenant_id', 'sequence'], { indexName: 'events_tenant_sequence' });
    // The events waiting for a number, oldest first.
    table.index(['sequence', 'event_id'], 'events_unnumbered');
    // Retention: the oldest first.
    table.index(['created_at'], 'events_created');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('events');
}
