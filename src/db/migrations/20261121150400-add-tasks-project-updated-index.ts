import type { Knex } from 'knex';

// Serves the task list sorted by updated_at.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tasks', (table) => {
    table.index(['project_id', 'updated_at', 'task_id'], 'tasks_project_updated');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tasks', (table) => {
    table.dropIndex(['project_id', 'updated_at', 'task_id'], 'tasks_project_updated');
  });
}
