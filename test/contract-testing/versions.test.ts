/**
 * Pacts per API version (issue 45): an interaction is in the version its request names with
 * `Api-Version`, else in 2026-11-28 (or `--api-version`'s); `verify-pact` asks the sandbox in it
 * and `check-pact` checks it against that version's document. States are set up in the newest,
 * so a 2026-11-28 interaction may read a task a state cancelled, as `done`.
 */
import { readPactFiles } from '../../src/contract-testing/pact-files';
import { verifyPacts } from '../../src/contract-testing/verify-pacts';
import { startTestService, type TestService } from '../support/test-service';
import { contractCli, readOf, removePacts, resultsOf, sandboxOf, verify, writePact } from './pacts';

let api: TestService;
beforeAll(async () => {
  api = await startTestService();
});
afterAll(async () => {
  await api.stop();
  removePacts();
});

const cancelledTask = [{ name: 'a task exists', params: { status: 'cancelled' } }];
const read = (description: string, version: string | undefined, body: object) => {
  const interaction = readOf(description, cancelledTask, '/v1/tasks/${task_id}', {
    status: 200,
    body,
  });
  if (version) Object.assign(interaction.request.headers, { 'Api-Version': version });
  return interaction;
};

test('verify-pact reads a cancelled task as done in an interaction without Api-Version, and as cancelled in one that names 2026-12-15', async () => {
  const file = writePact({
    interactions: [
      read('a cancelled task, as a client of before versions reads it', undefined, {
        status: 'done',
      }),
      read('a cancelled task, in 2026-12-15', '2026-12-15', { status: 'cancelled' }),
      read('a cancelled task, expected cancelled in 2026-11-28', '2026-11-28', {
        status: 'cancelled',
      }),
    ],
  });
  const results = resultsOf(await verify(api, file));
  expect(results['a cancelled task, as a client of before versions reads it']).toBe('OK');
  expect(results['a cancelled task, in 2026-12-15']).toBe('OK');
  expect(results['a cancelled task, expected cancelled in 2026-11-28']).toContain('done');
});

test('verify-pact --api-version asks interactions that name none in that version', async () => {
  const file = writePact({
    interactions: [read('a cancelled task, no header', undefined, { status: 'cancelled' })],
  });
  const outcome = await verifyPacts(sandboxOf(api), readPactFiles([file]), {
    logLevel: 'error',
    apiVersion: '2026-12-15',
  });
  expect(resultsOf(outcome)).toEqual({ 'a cancelled task, no header': 'OK' });
});

test("check-pact checks each interaction against its own version's document", async () => {
  const task = {
    task_id: '0193a5b3-1d20-7e55-8c3f-6a7b8c9d0e12',
    project_id: '0193a5b2-7c3e-7d41-9a6b-2f1e4c8d9a01',
    title: 't',
    description: null,
    status: 'cancelled',
    created_at: '2026-12-15T10:00:00.000Z',
    updated_at: '2026-12-15T10:00:00.000Z',
    completed_at: '2026-12-15T10:00:00.000Z',
  };
  const { completed_at: _closed, ...asBefore } = { ...task, status: 'done' };
  const file = writePact({
    interactions: [
      read('in 2026-12-15', '2026-12-15', task),
      read('before versions', undefined, asBefore),
    ],
  });
  expect(await checkPact(file)).toMatchObject({ code: 0 });

  // The newest's answer in an interaction of 2026-11-28: neither `cancelled` nor `completed_at` is there.
  const wrong = writePact({ interactions: [read('newest answer, no header', undefined, task)] });
  const refused = await checkPact(wrong);
  expect(refused.code).toBe(1);
  expect(refused.stdout).toMatch(/completed_at|cancelled/);
  expect(await checkPact('--api-version', '2026-12-15', wrong)).toMatchObject({ code: 0 });
  const unknown = await checkPact('--api-version', '2020-01-01', wrong);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain('the supported versions are 2026-12-15, 2026-11-28');
}, 180_000);

/** check-pact as a user runs it (the comparator is an ES module, which only a process can load). */
const checkPact = (...args: string[]) => contractCli('check-pact', ...args);
