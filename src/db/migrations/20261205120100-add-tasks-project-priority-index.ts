import type { Knex } from 'knex';

// Serves the task list sorted by priority, and its priority filter sorted by created_at (one
// seek per priority asked for, merged: src/db/keyset.ts).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tasks', (table) => {
    table.index(['project_id', 'priority', 'created_at', 'task_id'], 'tasks_project_priority');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tasks', (table) => {
    table.dropIndex(['project_id', 'priority', 'created_at', 'task_id'], 'tasks_project_priority');
  });
}
