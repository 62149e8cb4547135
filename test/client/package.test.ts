/**
 * The client kit as a client team gets it: `npm pack` makes a tarball that installs into an empty
 * folder (its dependencies from npm's cache) and works from CommonJS, from ESM and from tsc with
 * its .d.ts; publint and arethetypeswrong find nothing wrong with it; its version is the document's;
 * it ships its README and examples. A program using it against the real service feeds `ifMatch`
 * with what get, create and update returned, and a stale one is a typed precondition-failed.
 */
import { apiVersions } from '../../clients/typescript/src/versions';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { openapiDocumentPath, projectRoot } from '../../src/paths';
import { startTestService } from '../support/test-service';

const packageDir = path.join(projectRoot, 'clients', 'typescript');
const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-client-package-'));
const app = path.join(folder, 'app');
let tarball: string;
const bin = (name: string) => path.join(projectRoot, 'node_modules', '.bin', name);
const run = (command: string, args: string[], cwd: string) =>
  execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

beforeAll(() => {
  const packed = JSON.parse(
    run('npm', ['pack', '--json', '--pack-destination', folder], packageDir),
  );
  tarball = path.join(folder, packed[0].filename);
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }));
  run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], app);
}, 120_000);
afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

it('holds the newest API version, the one the document is', () => {
  const document = YAML.parse(fs.readFileSync(openapiDocumentPath, 'utf8'));
  expect(apiVersions[0]).toBe(document.info.version);
  expect(
    JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8')).version,
  ).toMatch(/^\d+\.\d+\.\d+$/);
});

it('ships its README and its examples, and the tarball is ignored by git', () => {
  const installed = path.join(app, 'node_modules', '@task-tracker', 'client');
  expect(fs.readFileSync(path.join(installed, 'README.md'), 'utf8')).toMatch(
    /^# @task-tracker\/client/,
  );
  expect(fs.readdirSync(path.join(installed, 'examples')).sort()).toEqual(
    fs.readdirSync(path.join(packageDir, 'examples')).sort(),
  );
  const packedHere = path.join(packageDir, path.basename(tarball));
  expect(run('git', ['check-ignore', packedHere], projectRoot).trim()).toBe(packedHere);
});

it('makes conditional changes from what it returned, and a stale one is a typed precondition-failed', async () => {
  const api = await startTestService();
  try {
    fs.writeFileSync(
      path.join(app, 'conditional.mjs'),
      `import { createClient, etagOf, isProblem } from '@task-tracker/client';
const tt = createClient(); // TASK_TRACKER_URL and TASK_TRACKER_API_KEY
const said = [];
const project = await tt.projects.create({ name: 'packed' });
const created = await tt.tasks.create({ project_id: project.project_id, title: 'one' });
const updated = await tt.tasks.update(created.task_id, { status: 'in_progress' }, { ifMatch: created });
const read = await tt.tasks.get(created.task_id);
said.push(etagOf(read) === etagOf(updated));
const again = await tt.tasks.update(created.task_id, { status: 'done' }, { ifMatch: read });
said.push(again.status);
try {
  await tt.tasks.update(created.task_id, { status: 'pending' }, { ifMatch: updated });
} catch (error) {
  said.push(isProblem(error, 'precondition-failed') && error.status);
}
await tt.projects.update(project.project_id, { name: 'renamed' }, { ifMatch: project });
said.push(await tt.projects.update(project.project_id, { name: 'stale' }, { ifMatch: project }).catch((error) => error.type));
console.log(JSON.stringify(said));
`,
    );
    // Run without blocking this process, which serves the API the program calls.
    const { stdout } = await promisify(execFile)(process.execPath, ['conditional.mjs'], {
      cwd: app,
      env: {
        ...process.env,
        TASK_TRACKER_URL: api.baseUrl,
        TASK_TRACKER_API_KEY: await api.createKey('packed'),
      },
      encoding: 'utf8',
    });
    expect(JSON.parse(stdout)).toEqual([true, 'done', 412, 'precondition-failed']);
  } finally {
    await api.stop();
  }
});

const usage = (load: string) => `${load}
const event = { event_id: '0193a000-0000-7000-8000-000000000001', sequence: 1, type: 'project.created', created_at: '2026-11-26T00:00:00.000Z', project_id: 'p', request_id: 'r', data: { object: {} } };
const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
const signed = webhooks.signTestWebhook(event, secret);
const client = kit.createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'tt_x' });
console.log(JSON.stringify([typeof client.tasks.list, webhooks.verifyWebhook(signed.body, signed.headers, secret).type, kit.isProblem(new Error('x')), typeof webhooks.webhookHandler({ secret, onEvent() {} })]));
`;
const expected = JSON.stringify(['function', 'project.created', false, 'function']);

it('works from CommonJS', () => {
  fs.writeFileSync(
    path.join(app, 'use.cjs'),
    usage(
      "const kit = require('@task-tracker/client'); const webhooks = require('@task-tracker/client/webhooks');",
    ),
  );
  expect(run(process.execPath, ['use.cjs'], app).trim()).toBe(expected);
});

it('works from ESM', () => {
  fs.writeFileSync(
    path.join(app, 'use.mjs'),
    usage(
      "import * as kit from '@task-tracker/client'; import * as webhooks from '@task-tracker/client/webhooks';",
    ),
  );
  expect(run(process.execPath, ['use.mjs'], app).trim()).toBe(expected);
});

it('type-checks with tsc from its .d.ts, and refuses what the document does not allow', () => {
  fs.writeFileSync(
    path.join(app, 'use.ts'),
    `import http from 'node:http';
import { createClient, isProblem, type Task, type TypedEvent } from '@task-tracker/client';
import { verifyWebhook, webhookHandler } from '@task-tracker/client/webhooks';
// Node's request and response are what the handler takes; the event is typed by its type.
export const receiver = http.createServer(
  webhookHandler({ secret: 'whsec_a', onEvent: (event) => void (event.type === 'task.created' && event.data.object.title) }),
);
export async function use(headers: Record<string, string | string[] | undefined>, body: string): Promise<string> {
  const client = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'tt_x' });
  const event: TypedEvent = verifyWebhook(body, headers, ['whsec_a', 'whsec_b']);
  if (event.type === 'task.updated') return event.data.previous.status ?? event.data.object.title;
  try {
    for await (const task of client.tasks.list('p', { status: ['done'], sort: '-updated_at' })) return task.title;
  } catch (error) {
    if (isProblem(error, 'not-found')) return error.detail;
  }
  // @ts-expect-error: 'finished' is no task status
  await client.tasks.update('t', { status: 'finished' });
  const held = await client.tasks.get('t');
  const same: typeof held = await client.tasks.get('t', { ifNoneMatch: held });
  const perhaps = await client.tasks.get('t', { ifNoneMatch: '"1"' });
  // @ts-expect-error: with an ETag string, an unchanged task answers undefined
  perhaps.title;
  const outcome: 'deleted' | 'deleted or already absent' = await client.tasks.delete('t', { ifMatch: same });
  const { response } = await client.tasks.update('t', { status: 'done' }, { ifMatch: held }).withResponse();
  if (response.status === 200) return outcome;
  // @ts-expect-error: without apiVersion, a task is 2026-11-28's, which has no completed_at
  held.completed_at;
  const newest = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'tt_x', apiVersion: '2026-12-15' });
  const cancelled: Task<'2026-12-15'> = await newest.tasks.update('t', { status: 'cancelled' });
  // @ts-expect-error: a version the kit does not know
  createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'tt_x', apiVersion: '2027-01-01' });
  return cancelled.completed_at ?? '';
}
`,
  );
  fs.writeFileSync(
    path.join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'node16',
        moduleResolution: 'node16',
        target: 'ES2022',
        strict: true,
        noEmit: true,
        types: ['node'],
        typeRoots: [path.join(projectRoot, 'node_modules', '@types')],
      },
      files: ['use.ts'],
    }),
  );
  const compiled = (() => {
    try {
      return run(bin('tsc'), ['-p', 'tsconfig.json'], app);
    } catch (error) {
      return (error as { stdout: string }).stdout;
    }
  })();
  expect(compiled).toBe('');
});

it('compiles the status board example written for 2026-11-28, and stops it at its switch once it is switched to 2026-12-15', () => {
  const example = fs.readFileSync(
    path.join(app, 'node_modules', '@task-tracker', 'client', 'examples', 'status-board.ts'),
    'utf8',
  );
  const compile = (file: string, text: string) => {
    fs.writeFileSync(path.join(app, file), text);
    fs.writeFileSync(
      path.join(app, `tsconfig.${file}.json`),
      JSON.stringify({
        extends: './tsconfig.json',
        files: [file],
      }),
    );
    try {
      return run(bin('tsc'), ['-p', `tsconfig.${file}.json`], app);
    } catch (error) {
      return (error as { stdout: string }).stdout;
    }
  };
  expect(compile('board.ts', example)).toBe('');
  const switched = example.replace(
    "const apiVersion = '2026-11-28';",
    "const apiVersion = '2026-12-15';",
  );
  expect(switched).not.toBe(example);
  const line =
    switched.split('\n').findIndex((text) => text.includes('const unhandled: never')) + 1;
  expect(compile('board-newest.ts', switched)).toMatch(
    new RegExp(
      `^board-newest\\.ts\\(${line},\\d+\\): error TS2322: Type '"cancelled"' is not assignable to type 'never'\\.`,
    ),
  );
});

it('passes publint and arethetypeswrong', () => {
  expect(run(bin('publint'), [packageDir], projectRoot)).toMatch(/All good!/);
  expect(() => run(bin('attw'), [tarball], projectRoot)).not.toThrow();
});
