import type { Knex } from 'knex';
import { searchWords } from '../task-filter';

// Version 2026-12-15's TaskFilter `text` (src/db/task-filter/words.ts): each task's words, as one
// token each, in a table of their own (not a column of tasks, which every read of a task reads
// whole) that each database's full-text index reads: MySQL's FULLTEXT, SQLite's FTS5 table
// task_search (external content: it holds only the index), kept in step by triggers. The service
// writes a task's row with the task; this fills them for the tasks that exist.
export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.config.client === 'mysql2';
  await knex.schema.createTable('task_search_words', (table) => {
    table
      .specificType('task_id', 'char(36)')
      .primary()
      .references('task_id')
      .inTable('tasks')
      .onDelete('CASCADE');
    // MEDIUMTEXT: 10,500 characters of words of three give up to 2,625 tokens of 25 bytes.
    table.text('search_words', 'mediumtext').notNullable();
  });
  await fill(knex);
  if (mysql) {
    await knex.raw('ALTER TABLE task_search_words ADD FULLTEXT INDEX task_search (search_words)');
    return;
  }
  // detail=none: only whether a task has a token is asked, never where.
  await knex.raw(
    "CREATE VIRTUAL TABLE task_search USING fts5(search_words, content='task_search_words', content_rowid='rowid', tokenize='ascii', detail='none')",
  );
  await knex.raw("INSERT INTO task_search(task_search) VALUES ('rebuild')");
  await knex.raw(`CREATE TRIGGER task_search_insert AFTER INSERT ON task_search_words BEGIN
    INSERT INTO task_search(rowid, search_words) VALUES (new.rowid, new.search_words);
  END`);
  await knex.raw(`CREATE TRIGGER task_search_delete AFTER DELETE ON task_search_words BEGIN
    INSERT INTO task_search(task_search, rowid, search_words) VALUES ('delete', old.rowid, old.search_words);
  END`);
  await knex.raw(`CREATE TRIGGER task_search_update AFTER UPDATE ON task_search_words BEGIN
    INSERT INTO task_search(task_search, rowid, search_words) VALUES ('delete', old.rowid, old.search_words);
    INSERT INTO task_search(rowid, search_words) VALUES (new.rowid, new.search_words);
  END`);
}

/** Every existing task's words, a batch at a time in id order. */
async function fill(knex: Knex): Promise<void> {
  let after = '';
  for (;;) {
    const rows: Array<{ task_id: string; title: string; description: string | null }> = await knex(
      'tasks',
    )
      .select('task_id', 'title', 'description')
      .where('task_id', '>', after)
      .orderBy('task_id')
      .limit(100);
    if (rows.length === 0) return;
    await knex('task_search_words').insert(
      rows.map((row) => ({
        task_id: row.task_id,
        search_words: searchWords(row.title, row.description),
      })),
    );
    after = rows[rows.length - 1].task_id;
  }
}

export async function down(knex: Knex): Promise<void> {
  if (knex.client.config.client !== 'mysql2') await knex.raw('DROP TABLE task_search');
  await knex.schema.dropTable('task_search_words');
}
