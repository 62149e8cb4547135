/**
 * `make mock` answers every API version on one port (issue 45): a request gets the mock of the
 * version its `Api-Version` names (the newest's without one), from that version's document; a
 * version the service does not support is its 400 problem.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../../src/paths';
import { newestVersion } from '../../src/versions/versions';
import { freePort } from '../support/free-port';

let mock: ChildProcess;
let url: string;
const taskPath = '/v1/tasks/0193a5b3-1d20-7e55-8c3f-6a7b8c9d0e12';
const get = (version?: string) =>
  fetch(url + taskPath, {
    headers: { Authorization: 'Bearer any', ...(version ? { 'Api-Version': version } : {}) },
  });

beforeAll(async () => {
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  mock = spawn(
    process.execPath,
    [path.join(projectRoot, 'dist/src/cli/mock.js'), '--port', String(port)],
    {
      stdio: 'ignore',
    },
  );
  // Up once every version's Prism answers through it.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answers = await Promise.all(
      [get(), get('2026-11-28')].map((p) => p.catch(() => undefined)),
    );
    if (answers.every((answer) => answer?.status === 200)) break;
    if (Date.now() > deadline) throw new Error('the mock did not answer in 60 s');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}, 90_000);
afterAll(() => {
  mock.kill('SIGTERM');
});

it("answers each version from its own document, and the newest's without Api-Version", async () => {
  const newest = (await (await get()).json()) as Record<string, unknown>;
  const named = await (await get(newestVersion)).json();
  const older = await (await get('2026-11-28')).json();
  expect(newest).toHaveProperty('completed_at');
  expect(named).toEqual(newest);
  expect(older).not.toHaveProperty('completed_at');
  const { completed_at: _closed, ...rest } = newest;
  expect(older).toEqual(rest);
});

it('refuses a version the service does not support, as the service does', async () => {
  const answer = await get('2020-01-01');
  expect(answer.status).toBe(400);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const problem = (await answer.json()) as { type: string; detail: string };
  expect(problem.type).toBe('/problems/unsupported-api-version');
  expect(problem.detail).toContain('the supported versions are 2026-12-15, 2026-11-28');
});
