import type { Knex } from 'knex';

/**
 * What a task's tenant_id holds until it is filled: the value of the column's default. A task is
 * its project's tenant's, and stays so (a task never moves to another project), so the column is
 * a copy of the project's tenant_id that search reads through indexes led by the tenant. The
 * service writes it with the task; rows written before the column existed, and rows written
 * meanwhile by instances of the version before it (a rolling upgrade keeps them running against
 * the new schema, and they name no tenant_id), have this until fillTaskTenants comes.
 */
export const unfilledTenant = '';

/**
 * Gives every task whose tenant_id is unfilled its project's tenant, a batch of `batch` at a time,
 * each its own statement, so that no transaction locks or copies a large table's rows at once (a
 * Galera write set has a size limit too). Each batch is found through the index led by tenant_id
 * (tasks_tenant_created), so once every row is filled this is one lookup that finds none.
 */
export async function fillTaskTenants(knex: Knex, batch = 1000): Promise<void> {
  for (;;) {
    const rows: Array<{ task_id: string }> = await knex('tasks')
      .select('task_id')
      .where('tenant_id', unfilledTenant)
      .limit(batch);
    if (rows.length === 0) return;
    await knex('tasks')
      .whereIn(
        'task_id',
        rows.map((row) => row.task_id),
      )
      .update({
        tenant_id: knex('projects')
          .select('projects.tenant_id')
          .where('projects.project_id', knex.ref('tasks.project_id')),
      });
  }
}
