/**
 * `upgrade-report` (issue 45): for each exchange of pacts or HAR files, the changes between its
 * API version and the target that touch it, with the request as the target takes it and the
 * answer as the target gives it; exit 0 when nothing is touched, 1 when something is, 2 on bad
 * input.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { contractCli, removePacts, writePact } from './pacts';

const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-upgrade-'));
afterAll(() => {
  removePacts();
  fs.rmSync(folder, { recursive: true, force: true });
});

const upgradeReport = (...args: string[]) => contractCli('upgrade-report', ...args);

const task = '/v1/tasks/0193a5b3-1d20-7e55-8c3f-6a7b8c9d0e12';
const auth = { Authorization: 'Bearer k' };
const exchange = (description: string, request: object, response: object) => ({
  description,
  request: { method: 'GET', headers: auth, ...request },
  response,
});

it('names the change that touches each exchange, with the request as the newer version takes it', async () => {
  const file = writePact({
    interactions: [
      exchange('a task is read', { path: task }, { status: 200, body: { status: 'done' } }),
      exchange(
        'done tasks are listed',
        {
          path: '/v1/projects/0193a5b2-7c3e-7d41-9a6b-2f1e4c8d9a01/tasks',
          query: { status: ['done'] },
        },
        { status: 200 },
      ),
      exchange('projects are listed', { path: '/v1/projects' }, { status: 200 }),
    ],
  });
  const run = await upgradeReport('--to', '2026-12-15', '--json', file);
  expect(run.code).toBe(1);
  const { exchanges } = JSON.parse(run.stdout);
  const byName = Object.fromEntries(
    exchanges.map((e: { description: string }) => [e.description, e]),
  );
  // A task is what two changes of 2026-12-15 touch: cancelled tasks and the planning fields.
  expect(byName['a task is read'].touched.map((t: { version: string }) => t.version)).toEqual([
    '2026-12-15',
    '2026-12-15',
  ]);
  expect(byName['a task is read'].answer).toMatchObject({
    fromDocumentExample: true,
    body: { completed_at: null },
  });
  expect(byName['done tasks are listed'].request.query).toEqual({ status: ['done', 'cancelled'] });
  expect(byName['projects are listed'].touched).toEqual([]);

  const text = await upgradeReport('--to', '2026-12-15', file);
  expect(text.stdout).toContain('"a task is read" (GET ' + task + ', 2026-11-28 → 2026-12-15');
  expect(text.stdout).toContain('A task can be cancelled');
  expect(text.stdout).toContain('A task has `priority`');
  expect(text.stdout).toContain('"projects are listed"');
  expect(text.stdout).toMatch(/"projects are listed" .*: not touched/);
});

it('brings a newer exchange down exactly to an older target, and reads HAR files', async () => {
  const har = path.join(folder, 'newest.har');
  fs.writeFileSync(
    har,
    JSON.stringify({
      log: {
        entries: [
          {
            request: {
              method: 'GET',
              url: `http://127.0.0.1:3000${task}`,
              headers: [{ name: 'Api-Version', value: '2026-12-15' }],
            },
            response: {
              status: 200,
              content: {
                text: JSON.stringify({
                  status: 'cancelled',
                  completed_at: '2026-12-15T10:00:00.000Z',
                }),
              },
            },
          },
        ],
      },
    }),
  );
  const run = await upgradeReport('--to', '2026-11-28', '--json', har);
  expect(run.code).toBe(1);
  const [only] = JSON.parse(run.stdout).exchanges;
  expect(only).toMatchObject({ from: '2026-12-15', to: '2026-11-28', operationId: 'getTask' });
  expect(only.answer).toEqual({
    status: 200,
    body: { status: 'done' },
    fromDocumentExample: false,
  });
});

it('exits 0 when nothing is touched, and 2 on bad input', async () => {
  const untouched = writePact({
    interactions: [exchange('projects are listed', { path: '/v1/projects' }, { status: 200 })],
  });
  expect((await upgradeReport('--to', '2026-12-15', untouched)).code).toBe(0);
  const unknown = await upgradeReport('--to', '2030-01-01', untouched);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain('--to "2030-01-01" is not a supported API version');
  expect((await upgradeReport(untouched)).code).toBe(2);
  const notJson = path.join(folder, 'bad.json');
  fs.writeFileSync(notJson, '{');
  const bad = await upgradeReport('--to', '2026-12-15', notJson);
  expect([bad.code, bad.stderr]).toEqual([
    2,
    expect.stringContaining('bad.json: cannot be read as JSON'),
  ]);
});
