import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('projects', (table) => {
    table.specificType('project_id', 'char(36)').primary();
    table
      .specificType('tenant_id', 'char(36)')
      .notNullable()
      .references('tenant_id')
      .inTable('tenants');
    table.string('name', 200).notNullable();
    table.text('description').notNullable();
    table.datetime('created_at', { precision: 3 }).notNullable();
    table.datetime('updated_at', { precision: 3 }).notNullable();
    // Serves the tenant's project list (keyset on created_at, id) and the foreign key.
    table.index(['tenant_id', 'created_at', 'project_id'], 'projects_tenant_created');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('projects');
}
