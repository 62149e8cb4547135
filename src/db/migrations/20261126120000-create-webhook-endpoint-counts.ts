import type { Knex } from 'knex';

// How many webhook endpoints each tenant has: registering one claims a place with a conditional
// UPDATE of this row, so the limit holds under concurrency without relying on row locks (which a
// Galera cluster does not hold across nodes).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_endpoint_counts', (table) => {
    table
      .specificType('tenant_id', 'char(36)')
      .primary()
      .references('tenant_id')
      .inTable('tenants');
    table.integer('endpoints').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_endpoint_counts');
}
