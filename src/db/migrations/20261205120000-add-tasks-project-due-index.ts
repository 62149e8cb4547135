import type { Knex } from 'knex';

// Serves the task list sorted by due_on, either way (src/db/task-order.ts: the tasks with a due
// date as one range, then those without as another), and its due_before and due_after filters.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tasks', (table) => {
    table.index(['project_id', 'due_on', 'created_at', 'task_id'], 'tasks_project_due');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tasks', (table) => {
    table.dropIndex(['project_id', 'due_on', 'created_at', 'task_id'], 'tasks_project_due');
  });
}
