/**
 * A compiled TaskFilter is a function made from source (matches.ts): what a tenant writes in a
 * filter must never become code. Hostile values (quotes, backticks, template holes, line
 * separators, comments) are compared as values, and none of them is in the predicate's source.
 * That the predicates answer as the SQL evaluator does is task-filter-equality.test.ts's.
 */
import type { components } from '../../generated/api';
import { compileTaskFilter, TaskReading, type TaskFilter } from '../../src/db/task-filter';

type Task = components['schemas']['Task'];

const hostile = [
  "'); process.exit(1); ('",
  '"); throw new Error("ran"); ("',
  '`${process.exit(1)}`',
  '*/ process.exit(1) /*',
  'a\u2028b\u2029c',
  '\\"; t = null; "',
  'constructor',
  '__proto__',
];

const task = (changes: Partial<Task>): Task => ({
  task_id: '0193a5b4-0a11-7c22-8d33-4e5f60718293',
  project_id: '0193a5b4-0a11-7c22-8d33-4e5f60718294',
  title: 'plain title',
  description: null,
  status: 'pending',
  created_at: '2026-12-05T10:00:00.000Z',
  updated_at: '2026-12-05T10:00:00.000Z',
  completed_at: null,
  priority: 'none',
  due_on: null,
  labels: [],
  assignee: null,
  ...changes,
});

const asks = (filter: TaskFilter, of: Task) => compileTaskFilter(filter)(new TaskReading(of));

it.each(hostile)('compares %j as a value, and keeps it out of the source', (value) => {
  const filters: TaskFilter[] = [
    { assignee: { eq: value } },
    { assignee: { in: [value, 'x'] } },
    { labels: { has: value } },
    { labels: { has_any: ['x', value] } },
    { labels: { has_all: [value] } },
    { not: { labels: { has_none: [value] } } },
    { text: `${value} title` },
  ];
  const holding = task({ assignee: value, labels: [value], title: `plain title ${value}` });
  const without = task({ assignee: 'someone', labels: ['other'] });
  for (const filter of filters) {
    const source = compileTaskFilter(filter).toString();
    expect(source).not.toContain(value);
    expect(source).toMatch(/^\(r\) => \{ const t = r\.task; return [\w$ .()!&|<>=,]+; \}$/);
    expect([filter, asks(filter, holding)]).toEqual([filter, true]);
    expect([filter, asks(filter, without)]).toEqual([filter, false]);
  }
});

it('answers for a filter with no conditions as the SQL evaluator does: all of none holds, any of none does not', () => {
  expect(asks({ all: [] }, task({}))).toBe(true);
  expect(asks({ any: [] }, task({}))).toBe(false);
  expect(asks({ not: { any: [] } }, task({}))).toBe(true);
});
