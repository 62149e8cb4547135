import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('tasks', (table) => {
    table.specificType('task_id', 'char(36)').primary();
    table
      .specificType('project_id', 'char(36)')
      .notNullable()
      .references('project_id')
      .inTable('projects')
      .onDelete('CASCADE');
    table.string('title', 500).notNullable();
    table.text('description').nullable();
    table.enu('status', ['pending', 'in_progress', 'done']).notNullable();
    table.datetime('created_at', { precision: 3 }).notNullable();
    table.datetime('updated_at', { precision: 3 }).notNullable();
    // Serves the list sorted by created_at (keyset on created_at, id) and the foreign key.
    table.index(['project_id', 'created_at', 'task_id'], 'tasks_project_created');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('tasks');
}
