import type { Knex } from 'knex';

// Serves the task list of one assignee, sorted by created_at.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tasks', (table) => {
    table.index(['project_id', 'assignee', 'created_at', 'task_id'], 'tasks_project_assignee');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tasks', (table) => {
    table.dropIndex(['project_id', 'assignee', 'created_at', 'task_id'], 'tasks_project_assignee');
  });
}
