import type { Knex } from 'knex';

// A search across the tenant's projects in each of its orders (src/db/task-order.ts), as the
// tasks_project_* indexes serve one project's list: by updated_at, and by due_on or priority then
// created_at (created_at: 20261215100000). A search by assignee reads the assignee's tasks in
// created_at order, and finds their status and due date in the index too (after task_id, which
// keeps the order whole), so "my open tasks due this month" reads no row it does not return.
// Made after the column is filled: each is built by one sort of the filled table.
const indexes: Array<[string, string[]]> = [
  ['tasks_tenant_updated', ['tenant_id', 'updated_at', 'task_id']],
  ['tasks_tenant_due', ['tenant_id', 'due_on', 'created_at', 'task_id']],
  ['tasks_tenant_priority', ['tenant_id', 'priority', 'created_at', 'task_id']],
  ['tasks_tenant_assignee', ['tenant_id', 'assignee', 'created_at', 'task_id', 'status', 'due_on']],
];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tasks', (table) => {
    for (const [name, columns] of indexes) table.index(columns, name);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tasks', (table) => {
    for (const [name, columns] of indexes) table.dropIndex(columns, name);
  });
}
