/**
 * The shape check of a TaskFilter (src/db/task-filter/shape.ts), alone: every fault with the
 * pointer to its place under the base pointer the caller gives (a search's `/filter`, a webhook
 * endpoint's), the limits the document cannot say (3 combinators deep, 50 conditions, words of 3
 * characters, days that exist), and a sound filter taken as it is.
 */
import type { components } from '../../generated/api';
import { checkTaskFilter, InvalidFilterError, taskFilterIssues } from '../../src/db/task-filter';

type TaskFilter = components['schemas']['TaskFilter'];

const issuesOf = (value: unknown, pointer = '/filter') =>
  taskFilterIssues(value, pointer).issues.map(({ pointer: at, message }) => [at, message]);

const nested = (levels: number, combinator: 'all' | 'any' | 'not' = 'all'): TaskFilter => {
  if (levels === 0) return { status: { in: ['pending'] } };
  const inner = nested(levels - 1, combinator);
  return combinator === 'not'
    ? { not: inner }
    : ({ [combinator]: [inner] } as unknown as TaskFilter);
};

it('takes every field with every operator, and combinators 3 deep', () => {
  const sound: TaskFilter[] = [
    { project_id: { in: ['0193a5b2-7c3e-7d41-9a6b-2f1e4c8d9a01'] } },
    { status: { in: ['pending', 'cancelled'] } },
    { priority: { in: ['none'], gte: 'low', lte: 'urgent' } },
    { assignee: { eq: 'ana ', in: ['Bo'], is_null: false } },
    { labels: { has: 'Ops', has_any: ['a'], has_all: ['b', 'B'], has_none: ['Straße'] } },
    {
      due_on: {
        lt: '2028-02-29',
        lte: '2026-12-31',
        gt: '2026-01-01',
        gte: '2026-01-01',
        is_null: false,
      },
    },
    { created_at: { lt: '2026-11-21T09:30:00.123Z', gte: '2026-11-01T00:00:00.000Z' } },
    { updated_at: { gte: '2026-11-01T00:00:00.000Z' } },
    { text: 'Straße, größte—2026!' },
    nested(3),
    nested(3, 'not'),
    { any: [{ not: { all: [{ text: 'one' }, { text: 'two' }] } }] },
  ];
  for (const filter of sound) {
    expect([filter, issuesOf(filter)]).toEqual([filter, []]);
    expect(checkTaskFilter(filter, '/filter')).toBe(filter);
  }
});

it('points to each fault under the base pointer it is given', () => {
  expect(issuesOf({ all: [{ status: { in: ['done'] } }, {}, { labels: { hass: 'x' } }] })).toEqual([
    ['/filter/all/1', expect.stringMatching(/^names nothing/)],
    [
      '/filter/all/2/labels/hass',
      expect.stringMatching(
        /^is not an operator of labels \(one of: has, has_any, has_all, has_none\)/,
      ),
    ],
  ]);
  // A webhook endpoint's filter is under its own pointer; a key with / or ~ is escaped.
  expect(issuesOf({ 'a/b~': {} }, '/filter')).toEqual([
    ['/filter/a~1b~0', expect.stringMatching(/^is not a field or combinator/)],
  ]);
  expect(issuesOf({ not: { due_on: { lt: '2026-02-30' } } }, '/body/filter')).toEqual([
    ['/body/filter/not/due_on/lt', 'is not a day that exists'],
  ]);
});

it('refuses combinators nested more than 3 deep, at the fourth', () => {
  expect(issuesOf(nested(4))).toEqual([
    ['/filter/all/0/all/0/all/0', 'nests combinators 4 deep; at most 3'],
  ]);
  expect(issuesOf(nested(5, 'not'))).toEqual([
    ['/filter/not/not/not', 'nests combinators 4 deep; at most 3'],
  ]);
  expect(issuesOf({ any: [{ text: 'fine' }, nested(3, 'any')] })).toEqual([
    ['/filter/any/1/any/0/any/0', 'nests combinators 4 deep; at most 3'],
  ]);
});

it('counts each operator as one condition, at most 50', () => {
  const conditions = (count: number): TaskFilter => ({
    all: Array.from({ length: count / 2 }, () => ({
      due_on: { gte: '2026-01-01', is_null: false },
    })),
  });
  expect(issuesOf(conditions(50))).toEqual([]);
  expect(issuesOf({ all: [conditions(50), { text: 'one more' }] })).toEqual([
    ['/filter', 'has 51 conditions; at most 50 (each operator is one)'],
  ]);
  // A list of more than 50 filters is refused as a list, not looked into.
  expect(issuesOf({ any: Array.from({ length: 51 }, () => ({ text: 'many' })) })).toEqual([
    ['/filter/any', 'must be a list of 1 to 50 filters'],
  ]);
});

it('refuses words of text shorter than 3 characters, counted as written', () => {
  expect(issuesOf({ text: 'ab' })).toEqual([
    ['/filter/text', 'has words shorter than 3 characters (ab): every word must have at least 3'],
  ]);
  expect(issuesOf({ text: 'fix a bug in it, a' })).toEqual([
    [
      '/filter/text',
      'has words shorter than 3 characters (a, in, it): every word must have at least 3',
    ],
  ]);
  expect(issuesOf({ text: '— !! —' })).toEqual([
    ['/filter/text', expect.stringMatching(/^has no word/)],
  ]);
  // ß is one character however it folds; three are a word.
  expect(issuesOf({ text: 'ßß' })).toHaveLength(1);
  expect(issuesOf({ text: 'ßßß 日本語' })).toEqual([]);
  expect(issuesOf({ text: 'x'.repeat(501) })).toEqual([
    ['/filter/text', 'must be a string of up to 500 characters'],
  ]);
});

it('refuses each kind of wrong operand', () => {
  const cases: Array<[unknown, string, RegExp]> = [
    [
      { project_id: { in: ['not-a-uuid'] } },
      '/filter/project_id/in',
      /item 0 must be a lowercase UUID/,
    ],
    [{ project_id: { in: [] } }, '/filter/project_id/in', /1 to 100 items/],
    [
      { status: { in: ['open'] } },
      '/filter/status/in',
      /item 0 must be one of: pending, in_progress, done, cancelled/,
    ],
    [{ priority: { gte: 'critical' } }, '/filter/priority/gte', /one of: none, low/],
    [{ assignee: { eq: '' } }, '/filter/assignee/eq', /1 to 200 characters/],
    [{ assignee: { is_null: 'yes' } }, '/filter/assignee/is_null', /boolean/],
    [{ labels: { has: 'trailing ' } }, '/filter/labels/has', /label/],
    [
      { labels: { has_all: ['ok', 'tab\there'] } },
      '/filter/labels/has_all',
      /item 1 must be a label/,
    ],
    [{ due_on: { lt: '2026-2-1' } }, '/filter/due_on/lt', /YYYY-MM-DD/],
    [{ due_on: { gte: '2027-02-29' } }, '/filter/due_on/gte', /not a day that exists/],
    [{ created_at: { lt: '2026-11-21T09:30:00Z' } }, '/filter/created_at/lt', /timestamp/],
    [
      { updated_at: { gte: '2026-02-30T00:00:00.000Z' } },
      '/filter/updated_at/gte',
      /not a moment that exists/,
    ],
    [{ due_on: {} }, '/filter/due_on', /one or more operators/],
    [{ due_on: null }, '/filter/due_on', /one or more operators/],
    [{ text: 3 }, '/filter/text', /string/],
    [{ all: {} }, '/filter/all', /list of 1 to 50 filters/],
    [{ all: [] }, '/filter/all', /list of 1 to 50 filters/],
    [{ not: 'x' }, '/filter/not', /must be an object/],
    [[], '/filter', /must be an object/],
    [null, '/filter', /must be an object/],
    [
      { status: { in: ['done'] }, text: 'two fields' },
      '/filter',
      /has 2 fields \(status, text\).*exactly one/,
    ],
  ];
  for (const [filter, pointer, message] of cases)
    expect([filter, issuesOf(filter)]).toEqual([
      filter,
      [[pointer, expect.stringMatching(message)]],
    ]);
});

it('is a 400 invalid-request listing the first 20 places, and counting the rest', () => {
  const filter = { all: Array.from({ length: 25 }, (_, i) => ({ [`field${i}`]: {} })) };
  let error: unknown;
  try {
    checkTaskFilter(filter, '/filter');
  } catch (thrown) {
    error = thrown;
  }
  expect(error).toBeInstanceOf(InvalidFilterError);
  const { kind, extra, message } = error as InvalidFilterError;
  expect(kind).toBe('invalid-request');
  expect(extra.errors).toHaveLength(20);
  expect(extra.errors![0]).toEqual({
    in: 'body',
    pointer: '/filter/all/0/field0',
    message: expect.stringMatching(/^is not a field or combinator/),
  });
  expect(extra.errorsNotListed).toBe(5);
  expect(message).toMatch(
    /^The request does not match the contract: body \/filter\/all\/0\/field0 is not/,
  );
  expect(message).toMatch(/; and 5 more places not listed\.$/);
});
