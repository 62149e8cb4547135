/**
 * A TaskFilter as SQL conditions on `tasks`, on MySQL and on SQLite: what search, bulk changes
 * and lists share. Each condition is true or false for every row, never NULL (a comparison with a
 * missing due date is false, so `not` of it is true), so that `not` means in SQL what it means in
 * memory (matches.ts). Labels are counted through task_labels' key for each task read
 * (labelsOfTask), the priority compared by its rank, `text` found through each database's
 * full-text index of the words' tokens (words.ts).
 */
import type { Knex } from 'knex';
import { labelFold, priorityRank } from '../task-planning';
import { toDbTimestamp } from '../timestamps';
import type { TaskFilter } from './shape';
import { foldedWords, wordToken } from './words';

type Where = Knex.QueryBuilder;

/**
 * How `text` is found. `index`: the tasks with the words, through the full-text index (MySQL's
 * FULLTEXT, SQLite's FTS5), whatever order the query reads in; it costs about what the number of
 * tasks (of every tenant) with the words does, so it suits words in few tasks. `probe`: each task
 * the query reads is looked up by its id in task_search_words and its words compared there, so
 * that a query in the order of an index stops at its page; it suits words in many of the tasks
 * read.
 */
export type TextLookup = 'index' | 'probe';

/**
 * Narrows a query over `tasks` (by that name) to the tasks that match the filter, which must have
 * passed checkTaskFilter. The conditions are grouped: whatever else the query has stays ANDed.
 */
export function whereTaskFilter<Q extends Where>(
  query: Q,
  filter: TaskFilter,
  text: TextLookup = 'index',
): Q {
  const mysql = query.client.config.client === 'mysql2';
  return query.where((q) => condition(q, filter, { mysql, text })) as Q;
}

/** Whether the filter has a `text` condition anywhere. */
export function hasText(filter: TaskFilter): boolean {
  if ('all' in filter) return filter.all.some(hasText);
  if ('any' in filter) return filter.any.some(hasText);
  if ('not' in filter) return hasText(filter.not);
  return 'text' in filter;
}

/** Whether the filter's only conditions are `text`. */
export function onlyText(filter: TaskFilter): boolean {
  if ('all' in filter) return filter.all.every(onlyText);
  if ('any' in filter) return filter.any.every(onlyText);
  if ('not' in filter) return onlyText(filter.not);
  return 'text' in filter;
}

/** The filter's `text` conditions every task it matches meets: at the top or inside `all`. */
export function requiredText(filter: TaskFilter): TaskFilter[] {
  if ('all' in filter) return filter.all.flatMap(requiredText);
  return 'text' in filter ? [filter] : [];
}

interface Dialect {
  mysql: boolean;
  text: TextLookup;
}

function condition(q: Where, filter: TaskFilter, dialect: Dialect, required = true): void {
  const { mysql } = dialect;
  // A condition inside `any` or `not` is not one every row chosen meets.
  const inner =
    (f: TaskFilter, stillRequired = false) =>
    (w: Where) =>
      condition(w, f, dialect, stillRequired);
  if ('all' in filter) for (const f of filter.all) q.where(inner(f, required));
  else if ('any' in filter) q.where((w) => filter.any.forEach((f) => w.orWhere(inner(f))));
  else if ('not' in filter) q.whereNot(inner(filter.not));
  else if ('project_id' in filter) {
    if (filter.project_id.in) q.whereIn('tasks.project_id', filter.project_id.in);
  } else if ('status' in filter) {
    if (filter.status.in) q.whereIn('tasks.status', filter.status.in);
  } else if ('priority' in filter) {
    const { in: among, gte, lte } = filter.priority;
    if (among) q.whereIn('tasks.priority', among.map(priorityRank));
    if (gte) q.where('tasks.priority', '>=', priorityRank(gte));
    if (lte) q.where('tasks.priority', '<=', priorityRank(lte));
  } else if ('assignee' in filter) assigneeCondition(q, filter.assignee, mysql);
  else if ('labels' in filter) labelsCondition(q, filter.labels);
  else if ('due_on' in filter) {
    const { lt, lte, gt, gte, is_null: isNull } = filter.due_on;
    const bounds: Array<[string, string | undefined]> = [
      ['<', lt],
      ['<=', lte],
      ['>', gt],
      ['>=', gte],
    ];
    for (const [operator, day] of bounds)
      if (day !== undefined) q.whereNotNull('tasks.due_on').where('tasks.due_on', operator, day);
    if (isNull !== undefined) q[isNull ? 'whereNull' : 'whereNotNull']('tasks.due_on');
  } else if ('created_at' in filter) momentsCondition(q, 'tasks.created_at', filter.created_at);
  else if ('updated_at' in filter) momentsCondition(q, 'tasks.updated_at', filter.updated_at);
  else if ('text' in filter) textCondition(q, filter.text, dialect, required);
  else throw new Error('not a checked TaskFilter');
}

type AssigneeOperators = Extract<TaskFilter, { assignee: unknown }>['assignee'];

function assigneeCondition(
  q: Where,
  { eq, in: among, is_null: isNull }: AssigneeOperators,
  mysql: boolean,
) {
  // MySQL's collations pad: 'ana' = 'ana ' there. The plain comparison can use an index; the
  // binary one makes it exact. NULL never equals, and IS NOT NULL keeps `not` two-valued.
  for (const names of [eq === undefined ? undefined : [eq], among]) {
    if (names === undefined) continue;
    q.whereNotNull('tasks.assignee').whereIn('tasks.assignee', names);
    if (mysql)
      q.whereRaw(`binary tasks.assignee in (${names.map(() => 'binary ?').join(', ')})`, names);
  }
  if (isNull !== undefined) q[isNull ? 'whereNull' : 'whereNotNull']('tasks.assignee');
}

type LabelOperators = Extract<TaskFilter, { labels: unknown }>['labels'];

/**
 * How many of the labels' folds the task has, the row of `tasks` in the query around it: one
 * probe of task_labels' key (task_id, label_fold) for each task the query reads, so that a search
 * reads the tenant's tasks in its order, through the index of that order, and stops at its page.
 * Not IN or EXISTS on task_labels, which MariaDB turns into a join led by the fold (EXISTS as
 * well, exists_to_in): it reads every task of every tenant with the label, then sorts them all.
 */
export function labelsOfTask(
  db: { queryBuilder(): Knex.QueryBuilder },
  labels: string[],
): Knex.QueryBuilder {
  const folds = [...new Set(labels.map(labelFold))];
  return db
    .queryBuilder()
    .from('task_labels')
    .count('*')
    .whereRaw('?? = ??', ['task_labels.task_id', 'tasks.task_id'])
    .whereIn('task_labels.label_fold', folds);
}

function labelsCondition(q: Where, labels: LabelOperators) {
  const count = (named: string[]) => labelsOfTask(q.client, named);
  const folds = (named: string[]) => new Set(named.map(labelFold)).size;
  if (labels.has !== undefined) q.whereRaw('(?) > 0', [count([labels.has])]);
  if (labels.has_any) q.whereRaw('(?) > 0', [count(labels.has_any)]);
  if (labels.has_all) q.whereRaw('(?) = ?', [count(labels.has_all), folds(labels.has_all)]);
  if (labels.has_none) q.whereRaw('(?) = 0', [count(labels.has_none)]);
}

function momentsCondition(q: Where, column: string, { lt, gte }: { lt?: string; gte?: string }) {
  if (lt !== undefined) q.where(column, '<', toDbTimestamp(lt));
  if (gte !== undefined) q.where(column, '>=', toDbTimestamp(gte));
}

/**
 * Every word's token is among the task's in task_search_words: through MySQL's FULLTEXT index
 * (boolean mode, each token required), or SQLite's FTS5 table task_search over it; or, as a
 * `probe`, in the task's own row of task_search_words, found by its key. There each token is
 * looked for as a substring: tokens are all 24 hex digits long and apart by single spaces, so 24
 * characters without a space inside search_words are one whole token.
 * On MySQL, a probe of a condition every task chosen meets (`required`: at the top or inside
 * `all`) is `task_id IN` the rows with the tokens: task_id being task_search_words' key, MariaDB
 * makes it a plain join (table pullout), each task read and then its row by key, about 4 µs a
 * task at a million. Elsewhere (inside `any` or `not`), and on SQLite, which would build that IN
 * from every row of task_search_words, it is a count compared to 0, as labelsOfTask's: a
 * subquery for each task read, on MariaDB about three times as dear.
 */
function textCondition(
  q: Where,
  text: string,
  { mysql, text: lookup }: Dialect,
  required: boolean,
) {
  const tokens = [...foldedWords(text)].map(wordToken);
  if (lookup === 'probe') {
    const words = (sub: Where) => {
      for (const token of tokens) sub.whereRaw('instr(??, ?) > 0', ['search_words', token]);
      return sub;
    };
    if (mysql && required)
      q.whereIn('tasks.task_id', (sub) => words(sub.select('task_id').from('task_search_words')));
    else
      q.whereRaw('(?) > 0', [
        words(
          q.client
            .queryBuilder()
            .from('task_search_words')
            .count('*')
            .whereRaw('?? = ??', ['task_search_words.task_id', 'tasks.task_id']),
        ),
      ]);
    return;
  }
  q.whereIn('tasks.task_id', (sub) =>
    withTokens(sub.select('task_id').from('task_search_words'), tokens, mysql),
  );
}

/** Narrows a query over task_search_words to the rows with every token, through the full-text index. */
function withTokens<Q extends Where>(query: Q, tokens: string[], mysql: boolean): Q {
  if (mysql)
    return query.whereRaw('match (task_search_words.search_words) against (? in boolean mode)', [
      tokens.map((token) => `+${token}`).join(' '),
    ]) as Q;
  return query.whereIn('task_search_words.rowid', (fts) =>
    fts
      .select('rowid')
      .from('task_search')
      .whereRaw('task_search match ?', [tokens.map((token) => `"${token}"`).join(' ')]),
  ) as Q;
}

/** Whether the filter is words every task it matches has, and nothing else: `text`, or `all` of them. */
export function wordsOnly(filter: TaskFilter): boolean {
  if ('all' in filter) return filter.all.every(wordsOnly);
  return 'text' in filter;
}

/**
 * Narrows a query over task_search_words (not tasks) to the rows of the tasks a wordsOnly filter
 * matches: every word of every `text` in one lookup of the full-text index.
 */
export function whereWords<Q extends Where>(query: Q, filter: TaskFilter): Q {
  const tokens = requiredText(filter).flatMap((f) =>
    'text' in f ? [...foldedWords(f.text)].map(wordToken) : [],
  );
  return withTokens(query, [...new Set(tokens)], query.client.config.client === 'mysql2');
}
