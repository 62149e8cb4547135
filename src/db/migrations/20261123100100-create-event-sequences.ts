import type { Knex } from 'knex';

// The last sequence given to each tenant's events: where numbering goes on, and what a long
// poll watches for.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('event_sequences', (table) => {
    table
      .specificType('tenant_id', 'char(36)')
      .primary()
      .references('tenant_id')
      .inTable('tenants');
    table.bigInteger('last_sequence').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('event_sequences');
}
