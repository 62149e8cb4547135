import type { Knex } from 'knex';

// A search by words alone (TaskFilter `text`) in created_at order picks its page in
// task_search_words itself (src/db/tasks-repository.ts wordsPage): the full-text index finds the
// rows with the words, and each row then holds its task's tenant and created_at, so the tasks
// are not read one by one to be sorted (BENCHMARKS.md). Copies of the task's, which never
// change. The table is new in the same version (20261215090000), and no instance writes it
// without them; the fill is for the tasks that exist, a batch at a time as fillTaskTenants does.
const batch = 1000;

export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.config.client === 'mysql2';
  if (mysql)
    // Both in one ALTER: one change of the table (its full-text index stays whole: migrations.test.ts).
    await knex.raw(
      "ALTER TABLE task_search_words ADD COLUMN tenant_id char(36) NOT NULL DEFAULT '', ADD COLUMN created_at datetime(3) NULL",
    );
  else
    await knex.schema.alterTable('task_search_words', (table) => {
      table.specificType('tenant_id', 'char(36)').notNullable().defaultTo('');
      table.datetime('created_at', { precision: 3 }).nullable();
    });
  let after = '';
  for (;;) {
    const ids: string[] = await knex('task_search_words')
      .where('task_id', '>', after)
      .orderBy('task_id')
      .limit(batch)
      .pluck('task_id');
    if (ids.length === 0) return;
    const ofTask = (column: string) =>
      knex('tasks').select(column).where('tasks.task_id', knex.ref('task_search_words.task_id'));
    await knex('task_search_words')
      .whereIn('task_id', ids)
      .update({ tenant_id: ofTask('tenant_id'), created_at: ofTask('created_at') });
    after = ids[ids.length - 1];
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE task_search_words DROP COLUMN tenant_id');
  await knex.raw('ALTER TABLE task_search_words DROP COLUMN created_at');
}
