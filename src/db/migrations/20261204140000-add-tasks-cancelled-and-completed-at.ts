import type { Knex } from 'knex';

// Version 2026-12-15 (src/versions/changes/cancelled-tasks.ts): a task may be `cancelled`, and
// says when it was closed. Tasks already done were closed when they were last changed.
export async function up(knex: Knex): Promise<void> {
  await allowStatuses(knex, ['pending', 'in_progress', 'done', 'cancelled']);
  await knex.schema.alterTable('tasks', (table) => {
    table.datetime('completed_at', { precision: 3 }).nullable();
  });
  await knex('tasks')
    .where('status', 'done')
    .update({ completed_at: knex.ref('updated_at') });
}

export async function down(knex: Knex): Promise<void> {
  await knex('tasks').where('status', 'cancelled').update({ status: 'done' });
  await knex.raw('ALTER TABLE tasks DROP COLUMN completed_at');
  await allowStatuses(knex, ['pending', 'in_progress', 'done']);
}

async function allowStatuses(knex: Knex, statuses: string[]): Promise<void> {
  if (knex.client.config.client === 'mysql2') {
    await knex.schema.alterTable('tasks', (table) => {
      table.enu('status', statuses).notNullable().alter();
    });
    return;
  }
  // SQLite: the enum is a CHECK, which only a new table changes. knex's alter() would keep the
  // old CHECK beside the new one, so the table is copied here, as SQLite's documentation does
  // it; nothing refers to tasks, so dropping the old one cascades nowhere.
  const { sql } = await knex('sqlite_master').where({ type: 'table', name: 'tasks' }).first('sql');
  const indexes: { sql: string }[] = await knex('sqlite_master')
    .where({ type: 'index', tbl_name: 'tasks' })
    .whereNotNull('sql')
    .select('sql');
  const listed = `(${statuses.map((status) => `'${status}'`).join(', ')})`;
  const created = (sql as string)
    .replace(/^CREATE TABLE [`"]?tasks[`"]?/i, 'CREATE TABLE `tasks_copy`')
    .replace(/\(\s*'pending'\s*,\s*'in_progress'\s*,\s*'done'\s*(,\s*'cancelled'\s*)?\)/g, listed);
  await knex.raw(created);
  await knex.raw('INSERT INTO tasks_copy SELECT * FROM tasks');
  await knex.raw('DROP TABLE tasks');
  await knex.raw('ALTER TABLE tasks_copy RENAME TO tasks');
  for (const index of indexes) await knex.raw(index.sql);
}
