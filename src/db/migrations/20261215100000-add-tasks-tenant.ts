import type { Knex } from 'knex';
import { fillTaskTenants, unfilledTenant } from '../task-tenants';

// A search across a tenant's projects (POST /v1/tasks/search) needs indexes led by the tenant:
// with only project_id on tasks, no index has the tenant's tasks in created_at order, and every
// page sorted all the matching tasks of all its projects. The column is a copy of the project's
// tenant (src/db/task-tenants.ts); its default lets instances of the version before keep
// inserting tasks during a rolling upgrade (deploy/galera/README.md), and is added in place. The
// index is made before the fill, which finds the rows still to fill through it.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tasks', (table) => {
    table.specificType('tenant_id', 'char(36)').notNullable().defaultTo(unfilledTenant);
  });
  await knex.schema.alterTable('tasks', (table) => {
    table.index(['tenant_id', 'created_at', 'task_id'], 'tasks_tenant_created');
  });
  await fillTaskTenants(knex);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tasks', (table) => {
    table.dropIndex(['tenant_id', 'created_at', 'task_id'], 'tasks_tenant_created');
  });
  // Plain DROP COLUMN on both: knex would copy the whole table on SQLite.
  await knex.raw('ALTER TABLE tasks DROP COLUMN tenant_id');
}
