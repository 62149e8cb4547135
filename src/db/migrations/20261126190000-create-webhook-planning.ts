import type { Knex } from 'knex';

// How far each tenant's numbered events have had their webhook deliveries planned: planning goes
// on from here after its events are numbered, in transactions of its own.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_planning', (table) => {
    table
      .specificType('tenant_id', 'char(36)')
      .primary()
      .references('tenant_id')
      .inTable('tenants');
    table.bigInteger('planned_sequence').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_planning');
}
