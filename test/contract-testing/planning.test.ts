/**
 * Pacts of the search and the bulk changes (version 2026-12-15), verified with verify-pact
 * against the real service: `tasks with labels and due dates exist` sets up the tasks its
 * catalogue row says, which a search by filter finds (a read-only key too), a bulk update by
 * filter previews and by `task_ids` (injected from the state's values) changes, and a bulk
 * delete previews. The same interactions without `Api-Version` are in 2026-11-28, which has no
 * such operations. check-pact holds the pact to the document too.
 */
import { startTestService, type TestService } from '../support/test-service';
import {
  anyValue,
  contractCli,
  fromState,
  jsonContent,
  removePacts,
  resultsOf,
  verify,
  writePact,
} from './pacts';

let api: TestService;
beforeAll(async () => {
  api = await startTestService();
});
afterAll(async () => {
  await api.stop();
  removePacts();
});

const planned = [{ name: 'tasks with labels and due dates exist', params: { assignee: 'ben' } }];
const sentIn = (version?: string) => ({
  Authorization: 'Bearer some-key',
  'Content-Type': 'application/json',
  ...(version ? { 'Api-Version': version } : {}),
});
const someId = '0193a5b3-1d20-7e55-8c3f-6a7b8c9d0e12';
/** Ben's overdue tasks of high priority or above, on 2026-12-01. */
const overdue = {
  all: [
    { assignee: { eq: 'ben' } },
    { priority: { gte: 'high' } },
    { due_on: { lt: '2026-12-01' } },
    { status: { in: ['pending', 'in_progress'] } },
  ],
};
const json = { header: { 'Content-Type': jsonContent } };

/** A POST of `body` to `path` in `version`, given the planned tasks. */
function post(
  description: string,
  path: string,
  body: object,
  response: object,
  {
    version = '2026-12-15',
    states = planned as object[],
    generators = {} as Record<string, object>,
  } = {},
) {
  return {
    description,
    providerStates: states,
    request: {
      method: 'POST',
      path,
      headers: sentIn(version || undefined),
      body,
      ...(Object.keys(generators).length > 0 ? { generators: { body: generators } } : {}),
    },
    response,
  };
}

const interactions = [
  post(
    'a search finds the overdue tasks of high priority',
    '/v1/tasks/search',
    { filter: overdue, sort: 'created_at' },
    {
      status: 200,
      headers: { 'Content-Type': 'application/json', 'Api-Version': '2026-12-15' },
      body: {
        data: [
          {
            task_id: someId,
            title: 'Fix the login page',
            status: 'pending',
            priority: 'urgent',
            labels: ['bug', 'web'],
            due_on: '2026-11-20',
            assignee: 'ben',
            completed_at: null,
          },
          {
            task_id: someId,
            title: 'Write the release notes',
            status: 'in_progress',
            priority: 'high',
            labels: ['docs'],
            due_on: '2026-11-25',
            assignee: 'ben',
          },
        ],
        next_cursor: null,
      },
      matchingRules: { ...json, body: { '$.data[*].task_id': anyValue } },
    },
  ),
  post(
    'a search by label and without a due date, with a read-only key',
    '/v1/tasks/search',
    { filter: { any: [{ labels: { has: 'PLANNING' } }, { due_on: { is_null: true } }] } },
    {
      status: 200,
      body: {
        data: [
          { title: 'Plan the next sprint', assignee: 'ben' },
          { title: 'Tidy the backlog', assignee: null, due_on: null, labels: [] },
        ],
        next_cursor: null,
      },
    },
    { states: [...planned, { name: 'the key can only read' }] },
  ),
  post(
    'a dry run of starting the overdue tasks',
    '/v1/tasks/bulk-update',
    { filter: overdue, changes: { status: 'in_progress' }, dry_run: true },
    {
      status: 200,
      body: { matched: 2, changed: 1, task_ids: [someId], dry_run: true },
      matchingRules: { ...json, body: { '$.task_ids[0]': anyValue } },
    },
  ),
  post(
    'two tasks by id raised to urgent and labelled',
    '/v1/tasks/bulk-update',
    { task_ids: [someId, someId], changes: { priority: 'urgent', labels_add: ['release'] } },
    {
      status: 200,
      body: { matched: 2, changed: 2, task_ids: [someId, someId], dry_run: false },
      matchingRules: { body: { '$.task_ids': { combine: 'AND', matchers: [{ match: 'type' }] } } },
    },
    {
      generators: {
        '$.task_ids[0]': fromState('${task_id_2}'),
        '$.task_ids[1]': fromState('${task_id_3}'),
      },
    },
  ),
  post(
    'a dry run of deleting the unassigned tasks',
    '/v1/tasks/bulk-delete',
    { filter: { assignee: { is_null: true } }, dry_run: true },
    {
      status: 200,
      body: { matched: 1, changed: 1, task_ids: [someId], dry_run: true },
      matchingRules: { body: { '$.task_ids[0]': anyValue } },
    },
  ),
  post(
    'a search in 2026-11-28, which has none',
    '/v1/tasks/search',
    { filter: overdue },
    {
      status: 405,
      headers: { Allow: 'GET, PATCH, DELETE' },
      // As /v1/tasks/{task_id} is answered there: its methods, in any order (Pact matches each).
      matchingRules: {
        header: {
          Allow: {
            combine: 'AND',
            matchers: [{ match: 'regex', regex: '^(GET|PATCH|DELETE)$' }],
          },
        },
      },
    },
    { version: '' },
  ),
  post(
    'a bulk update in 2026-11-28, which has none',
    '/v1/tasks/bulk-update',
    { filter: overdue, changes: { status: 'in_progress' } },
    { status: 405 },
    { version: '2026-11-28' },
  ),
];

test('verify-pact verifies the search and the bulk changes against the planned tasks', async () => {
  const outcome = await verify(api, writePact({ interactions }));
  expect(resultsOf(outcome)).toEqual(
    Object.fromEntries(interactions.map((interaction) => [interaction.description, 'OK'])),
  );
  expect(outcome.passed).toBe(true);
});

test('verify-pact fails a pact that expects what the tasks are not', async () => {
  const wrong = post(
    'a dry run expected to change both',
    '/v1/tasks/bulk-update',
    { filter: overdue, changes: { status: 'in_progress' }, dry_run: true },
    { status: 200, body: { matched: 2, changed: 2, dry_run: true } },
  );
  const outcome = await verify(api, writePact({ interactions: [wrong] }));
  expect(outcome.passed).toBe(false);
  expect(resultsOf(outcome)['a dry run expected to change both']).toContain('changed');
});

test("check-pact finds the 2026-12-15 interactions in that version's document, and the others in none", async () => {
  const checked = await contractCli('check-pact', writePact({ interactions }));
  expect(checked.code).toBe(1);
  const refused = [...checked.stdout.matchAll(/error in "(.*)"\n.*\n\s+why: +(.*)/g)];
  expect(refused.map(([, description, why]) => [description, why])).toEqual([
    [
      'a search in 2026-11-28, which has none',
      expect.stringContaining('not defined in spec file: POST /v1/tasks/search'),
    ],
    [
      'a bulk update in 2026-11-28, which has none',
      expect.stringContaining('not defined in spec file: POST /v1/tasks/bulk-update'),
    ],
  ]);
}, 180_000);
