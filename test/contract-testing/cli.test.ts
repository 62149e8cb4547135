/**
 * `npm run -s contract -- verify-pact | check-pact` as a user runs them (the compiled entry
 * point): Pact's report and the exit status, a failure naming its interaction and what differed,
 * the JUnit report, usage errors, and check-pact's verdicts on pacts the document does and does
 * not allow.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../src/paths';
import { fromState, jsonContent, removePacts, writePact } from './pacts';

const entryPoint = path.join(projectRoot, 'dist', 'src', 'cli', 'contract.js');
const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-contract-cli-'));
afterAll(() => {
  removePacts();
  fs.rmSync(folder, { recursive: true, force: true });
});

function contract(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [entryPoint, ...args],
      { env: { ...process.env, DATABASE_URL: '' }, timeout: 60_000 },
      // Pact colours its report even when it is not on a terminal.
      (error, stdout, stderr) =>
        resolve({
          code: error ? Number(error.code ?? 1) : 0,
          stdout: stdout.replace(/\u001b\[[0-9;]*m/g, ''),
          stderr,
        }),
    );
  });
}

const auth = { Authorization: 'Bearer some-key' };
const listed = (description: string, name: string) => ({
  description,
  providerStates: [{ name: 'a project exists', params: { name: 'Alpha' } }],
  request: { method: 'GET', path: '/v1/projects', headers: auth },
  response: { status: 200, body: { data: [{ name }], next_cursor: null } },
});

test('verify-pact: a wrong expectation fails its interaction by name, with what differed, in the report and the JUnit file', async () => {
  const file = writePact({
    interactions: [
      listed('projects are listed', 'Alpha'),
      listed('the wrong project is listed', 'Beta'),
    ],
  });
  const junit = path.join(folder, 'junit.xml');
  const run = await contract(
    'verify-pact',
    '--junit',
    junit,
    '--provider-version',
    '1.5.0-test',
    file,
  );
  expect(run.code).toBe(1);
  expect(run.stdout).toMatch(
    /1\) Verifying a pact between test-consumer and task-tracker .* - the wrong project is listed/,
  );
  expect(run.stdout).toContain('$.data[0].name');
  expect(run.stdout).toContain("Expected 'Alpha' (String) to be equal to 'Beta' (String)");
  expect(run.stdout).not.toMatch(/\) Verifying .* - projects are listed/);
  expect(run.stdout).toMatch(
    /verify-pact: 1 of 2 interactions of 1 pact\(s\) failed: "the wrong project is listed" \(in \d+ ms\)/,
  );
  const report = fs.readFileSync(junit, 'utf8');
  expect(report).toContain('<testsuite name="test-consumer → task-tracker" tests="2" failures="1"');
  expect(report).toMatch(/<testcase [^>]*name="projects are listed"[^>]*>\s*<\/testcase>/);
  expect(report).toMatch(
    /name="the wrong project is listed"[^>]*>\s*<failure message="\$\.data\[0\]\.name: Expected &apos;Alpha&apos;/,
  );
});

const someId = '0193a5b3-1d20-7e55-8c3f-6a7b8c9d0e12';

test('verify-pact: a failing interaction shows the request as sent and the problem answered, in the report and the JUnit file, never the key', async () => {
  const file = writePact({
    interactions: [
      {
        description: 'a task is finished',
        providerStates: [{ name: 'a task exists' }],
        request: {
          method: 'PATCH',
          path: `/v1/tasks/${someId}`,
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: { status: 'finished' },
          generators: { path: fromState('/v1/tasks/${task_id}') },
        },
        response: { status: 200, body: { status: 'finished' } },
      },
      {
        description: 'finished tasks are listed',
        providerStates: [{ name: 'a project with tasks exists' }],
        request: {
          method: 'GET',
          path: `/v1/projects/${someId}/tasks`,
          query: 'status=finished',
          headers: { ...auth, 'Api-Version': '2026-12-15' },
          generators: { path: fromState('/v1/projects/${project_id}/tasks') },
        },
        response: { status: 200 },
      },
    ],
  });
  const junit = path.join(folder, 'answered.xml');
  const run = await contract('verify-pact', '--junit', junit, file);
  expect(run.code).toBe(1);
  // Pact's own mismatch lines, then what was sent and answered under the interaction's name.
  expect(run.stdout).toContain("$.status -> Expected 400 (Integer) to be equal to 'finished'");
  const patch = run.stdout.slice(run.stdout.indexOf('What "a task is finished"'));
  expect(patch).toMatch(
    /^What "a task is finished" \(test-consumer\) sent and was answered:\n {2}sent PATCH \/v1\/tasks\/[0-9a-f-]{36}\n {4}Api-Version: 2026-11-28\n {4}Content-Type: application\/json\n {4}Authorization: a write key of the interaction's tenant \(not shown\)\n {2}answered 400 \(application\/problem\+json[^)]*\)\n {4}detail: .*\/status.*\n {4}errors:\n {6}body \/status: must be one of: pending, in_progress, done\n/,
  );
  expect(patch).not.toContain(someId);
  expect(run.stdout).toMatch(
    /What "finished tasks are listed" \(test-consumer\) sent and was answered:\n {2}sent GET \/v1\/projects\/[0-9a-f-]{36}\/tasks\?status=finished\n {4}Api-Version: 2026-12-15\n(.*\n)* {4}errors:\n {6}query status: /,
  );
  expect(run.stdout).toMatch(
    /verify-pact: 2 of 2 interactions of 1 pact\(s\) failed: "a task is finished", "finished tasks are listed"/,
  );
  const report = fs.readFileSync(junit, 'utf8');
  expect(report).toMatch(
    /name="a task is finished"[^>]*>\s*<failure [^>]*>[^<]*expected 200 but was 400\nsent PATCH \/v1\/tasks\/[0-9a-f-]{36}\n[^<]*answered 400 [^<]*errors:\n {4}body \/status: must be one of/,
  );
  // The tenant's key went to the sandbox; neither the report nor the JUnit file shows it.
  for (const text of [run.stdout, run.stderr, report]) expect(text).not.toMatch(/tt_[\w-]{43}/);
});

test('verify-pact: a folder of pacts that hold passes with exit 0', async () => {
  const pacts = path.join(folder, 'good');
  fs.mkdirSync(pacts);
  fs.copyFileSync(
    writePact({ interactions: [listed('projects are listed', 'Alpha')] }),
    path.join(pacts, 'a.json'),
  );
  fs.copyFileSync(
    writePact(
      {
        interactions: [
          {
            description: 'no key',
            request: { method: 'GET', path: '/v1/projects' },
            response: {
              status: 401,
              headers: { 'Content-Type': 'application/problem+json' },
              matchingRules: { header: { 'Content-Type': jsonContent } },
            },
          },
        ],
      },
      'other-consumer',
    ),
    path.join(pacts, 'b.json'),
  );
  const run = await contract('verify-pact', pacts);
  expect(run.stdout).toContain('Verifying a pact between test-consumer and task-tracker');
  expect(run.stdout).toContain('Verifying a pact between other-consumer and task-tracker');
  expect(run.stdout).toContain('verify-pact: 2 interactions of 2 pact(s) verified');
  expect(run.code).toBe(0);
});

test('verify-pact: no pact, a missing file, a file that is not a pact or an unknown option is a usage error (exit 2)', async () => {
  const notPact = path.join(folder, 'not-a-pact.json');
  fs.writeFileSync(notPact, '{"hello": "world"}');
  const broken = path.join(folder, 'broken.json');
  fs.writeFileSync(broken, '{"consumer": ');
  for (const [args, says] of [
    [[], 'name at least one pact file or folder'],
    [[path.join(folder, 'missing.json')], 'missing.json: no such file or folder'],
    [[notPact], 'is not a pact'],
    [[broken], 'cannot be read as JSON'],
    [['--bogus', notPact], "Unknown option '--bogus'"],
  ] as const) {
    const run = await contract('verify-pact', ...args);
    expect({ code: run.code, says: run.stderr.includes(says) }).toEqual({ code: 2, says: true });
  }
  expect((await contract('verify-pacts')).code).toBe(2);
});

test('check-pact: a pact the document allows passes; one it does not is named by interaction, place and reason', async () => {
  const allowed = writePact({
    interactions: [
      {
        description: 'a project is created',
        request: {
          method: 'POST',
          path: '/v1/projects',
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: { name: 'Alpha', description: 'First' },
        },
        response: {
          status: 201,
          headers: { 'Content-Type': 'application/json' },
          body: { project_id: '0193a5b2-7c3e-7d41-9a6b-2f1e4c8d9a01', name: 'Alpha' },
        },
      },
    ],
  });
  const messages = writePact({
    messages: [{ description: 'a task.created event', contents: { type: 'task.created' } }],
  });
  const mixed = writePact(
    {
      interactions: [
        {
          type: 'Synchronous/HTTP',
          description: 'projects are listed',
          request: {
            method: 'GET',
            path: '/v1/projects',
            headers: { Authorization: ['Bearer k'] },
          },
          response: { status: 200 },
        },
        {
          type: 'Asynchronous/Messages',
          description: 'a task.created event',
          contents: { content: { type: 'task.created' }, contentType: 'application/json' },
        },
      ],
    },
    'mixed-consumer',
    '4.0',
  );
  const good = await contract('check-pact', allowed, messages, mixed);
  expect(good.stdout).toContain('messages only, which verify-pact verifies');
  expect(good.stdout).toContain('compatible with the document');
  // The message beside HTTP interactions is said to be left to verify-pact, not passed over in silence.
  expect(good.stdout).toContain(
    '(mixed-consumer → task-tracker): compatible with the document; 1 message interaction(s) not checked here (verify-pact verifies them)',
  );
  expect(good.code).toBe(0);

  const refused = writePact({
    interactions: [
      {
        description: 'a task with a colour is created',
        request: {
          method: 'POST',
          path: '/v1/tasks',
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: {
            project_id: '0193a5b2-7c3e-7d41-9a6b-2f1e4c8d9a01',
            title: 'Paint',
            colour: 'red',
          },
        },
        response: {
          status: 201,
          headers: { 'Content-Type': 'application/json' },
          body: { title: 'Paint' },
        },
      },
      {
        description: 'a project with a budget is read',
        request: {
          method: 'GET',
          path: '/v1/projects/0193a5b2-7c3e-7d41-9a6b-2f1e4c8d9a01',
          headers: auth,
        },
        response: {
          status: 200,
          headers: { 'Content-Type': 'application/json' },
          body: { name: 'Alpha', budget: 100 },
        },
      },
    ],
  });
  const bad = await contract('check-pact', refused);
  expect(bad.code).toBe(1);
  expect(bad.stdout).toContain('incompatible with the document');
  expect(bad.stdout).toMatch(
    /error in "a task with a colour is created" \(POST \/v1\/tasks\)\n\s+where: .*request\.body.*\n\s+why: .*additional properties - colour/,
  );
  expect(bad.stdout).toMatch(
    /error in "a project with a budget is read" \(GET \/v1\/projects\/\{project_id\}\)\n\s+where: .*response\.body.*\n\s+why: .*additional properties - budget/,
  );
});
