import type { Knex } from 'knex';
import { searchWords } from '../task-filter';
import { labelFold, labelSet } from '../task-planning';

// Version 2026-12-15's labels and TaskFilter `text` words compare by the case folds of their NFC
// normalisation (src/db/task-planning.ts labelFold): `é` typed as `e` and a combining accent is
// `é`. What was folded before without it is folded again here: a task's task_labels rows and
// its task_search_words tokens. Only text with a character past ASCII can fold otherwise (ASCII
// is its own NFC form), so the other tasks are read and left as they are. A task that had two
// labels now the same (`é` in both spellings) keeps the first, and its labels are sorted by
// their new folds, as the service writes them.
const batch = 500;
const pastAscii = /[^\u0000-\u007f]/;

interface TaskRow {
  task_id: string;
  title: string;
  description: string | null;
  labels: string;
}

export async function up(knex: Knex): Promise<void> {
  let after = '';
  for (;;) {
    const rows: TaskRow[] = await knex('tasks')
      .select('task_id', 'title', 'description', 'labels')
      .where('task_id', '>', after)
      .orderBy('task_id')
      .limit(batch);
    if (rows.length === 0) return;
    await refoldLabels(
      knex,
      rows.filter((row) => pastAscii.test(row.labels)),
    );
    await refoldWords(
      knex,
      rows.filter((row) => pastAscii.test(row.title) || pastAscii.test(row.description ?? '')),
    );
    after = rows[rows.length - 1].task_id;
  }
}

async function refoldLabels(knex: Knex, rows: TaskRow[]): Promise<void> {
  if (rows.length === 0) return;
  const stored: Array<{ task_id: string; label_fold: string }> = await knex('task_labels')
    .select('task_id', 'label_fold')
    .whereIn(
      'task_id',
      rows.map((row) => row.task_id),
    );
  const foldsOf = new Map<string, string[]>();
  for (const { task_id, label_fold } of stored)
    foldsOf.set(task_id, [...(foldsOf.get(task_id) ?? []), label_fold]);
  for (const row of rows) {
    const labels = labelSet(JSON.parse(row.labels) as string[]);
    const folds = labels.map(labelFold);
    const had = (foldsOf.get(row.task_id) ?? []).sort();
    if (JSON.stringify(labels) !== row.labels)
      // The task shows other labels: a new version, so that its old ETag no longer matches.
      await knex('tasks')
        .where('task_id', row.task_id)
        .update({ labels: JSON.stringify(labels), version: knex.raw('version + 1') });
    if ([...folds].sort().join('\n') === had.join('\n')) continue;
    await knex('task_labels').where('task_id', row.task_id).delete();
    await knex('task_labels').insert(
      folds.map((label_fold) => ({ task_id: row.task_id, label_fold })),
    );
  }
}

async function refoldWords(knex: Knex, rows: TaskRow[]): Promise<void> {
  if (rows.length === 0) return;
  const stored: Array<{ task_id: string; search_words: string }> = await knex('task_search_words')
    .select('task_id', 'search_words')
    .whereIn(
      'task_id',
      rows.map((row) => row.task_id),
    );
  const wordsOf = new Map(stored.map((row) => [row.task_id, row.search_words]));
  for (const row of rows) {
    const words = searchWords(row.title, row.description);
    if (wordsOf.get(row.task_id) === words) continue;
    // SQLite's triggers keep its FTS5 index in step; MariaDB's FULLTEXT index follows the row.
    await knex('task_search_words').where('task_id', row.task_id).update({ search_words: words });
  }
}

// Nothing to undo: the folds before normalisation are the same for every label and word typed
// in NFC, as nearly all are; the rest stay found as this version finds them.
export async function down(): Promise<void> {}
