import type { Knex } from 'knex';

// Version 2026-12-15 (src/versions/changes/planning-fields.ts): a task has a priority, a due
// date, labels and an assignee; tasks made before have none of them. The task row holds what a
// read shows (labels as written, in JSON; the priority as its rank, so that it sorts in its
// order); task_labels holds each label's case fold, so that a lookup by label uses an index.
export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.config.client === 'mysql2';
  await knex.schema.alterTable('tasks', (table) => {
    table.tinyint('priority').notNullable().defaultTo(0);
    table.date('due_on').nullable();
    // Not TEXT, which MySQL lets have no default: twenty labels of fifty characters, each
    // escaped in full (a quote is two), fit in 2,100.
    table.string('labels', 2100).notNullable().defaultTo('[]');
    table.string('assignee', 200).nullable();
  });
  await knex.schema.createTable('task_labels', (table) => {
    table
      .specificType('task_id', 'char(36)')
      .notNullable()
      .references('task_id')
      .inTable('tasks')
      .onDelete('CASCADE');
    // A fold may be longer than its label (ß folds to ss); compared byte for byte, so that a
    // collation never makes two labels the same that differ in more than case (é and e).
    const fold = table.string('label_fold', 150).notNullable();
    if (mysql) fold.collate('utf8mb4_bin');
    table.primary(['task_id', 'label_fold']);
    table.index(['label_fold', 'task_id'], 'task_labels_fold');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('task_labels');
  // Plain DROP COLUMN on both: knex would copy the whole table on SQLite.
  for (const column of ['priority', 'due_on', 'labels', 'assignee'])
    await knex.raw(`ALTER TABLE tasks DROP COLUMN ${column}`);
}
