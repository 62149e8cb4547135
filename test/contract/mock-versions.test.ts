/**
 * `make mock` answers every API version on one port (issue 45): a request gets the mock of the
 * version its `Api-Version` names (the newest's without one), from that version's document; a
 * version the service does not support is its 400 problem. An invalid request gets the service's
 * own 400, in its words, rather than a documented example of another fault (issue 47, item 7).
 * The search and the bulk changes (issue 46) answer in 2026-12-15 with the document's examples,
 * and in 2026-11-28, which has neither, as the service answers them there: its 405 with `Allow`;
 * a path no version has is the service's 404.
 */
import fs from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import YAML from 'yaml';
import { openapiDocumentPath, projectRoot } from '../../src/paths';
import { newestVersion } from '../../src/versions/versions';
import { assertConformsToContract } from '../support/contract';
import { freePort } from '../support/free-port';
import { startTestService, type TestService } from '../support/test-service';

let mock: ChildProcess;
let service: TestService;
let key: string;
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
  service = await startTestService();
  key = await service.createKey('mock-parity');
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
afterAll(async () => {
  mock.kill('SIGTERM');
  await service.stop();
});

it("answers each version from its own document, and the newest's without Api-Version", async () => {
  const newest = (await (await get()).json()) as Record<string, unknown>;
  const named = await (await get(newestVersion)).json();
  const older = await (await get('2026-11-28')).json();
  // What 2026-12-15 added to a task: its examples have it, 2026-11-28's have none of it.
  const added = ['completed_at', 'priority', 'due_on', 'labels', 'assignee'];
  for (const field of added) expect(newest).toHaveProperty(field);
  expect(named).toEqual(newest);
  const rest = Object.fromEntries(
    Object.entries(newest).filter(([field]) => !added.includes(field)),
  );
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

describe("an invalid request gets the service's own 400, naming what is wrong", () => {
  const bad: Array<[string, string, string, string | undefined, Record<string, string>?]> = [
    ['a status that is none', 'PATCH', taskPath, '{"status":"finished"}'],
    ['a create without a project, its title empty', 'POST', '/v1/tasks', '{"title":""}'],
    ['a field that is none', 'POST', '/v1/projects', '{"name":"Launch","colour":"red"}'],
    ['a query parameter out of range', 'GET', '/v1/projects?limit=1000', undefined],
    ['a body that is not JSON', 'POST', '/v1/projects', '{"name":'],
    [
      'cancelled in 2026-11-28',
      'PATCH',
      taskPath,
      '{"status":"cancelled"}',
      { 'Api-Version': '2026-11-28' },
    ],
  ];
  it.each(bad)('%s', async (_case, method, path, body, headers = {}) => {
    const init = {
      method,
      // One id for both, so that the two problems can be compared whole.
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'mock-parity', ...headers },
      body,
    };
    const fromMock = await fetch(url + path, {
      ...init,
      headers: { ...init.headers, Authorization: 'Bearer any' },
    });
    const fromService = await service.send(method, path, { key, headers: init.headers, body });
    const text = await fromMock.text();
    const problem = JSON.parse(text);
    expect({ status: fromMock.status, problem }).toEqual({
      status: fromService.status,
      problem: fromService.json,
    });
    expect(fromMock.status).toBe(400);
    expect(fromMock.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    await assertConformsToContract(method, path, {
      status: fromMock.status,
      headers: fromMock.headers,
      text,
    });
  });

  it('names /status with the values it may take', async () => {
    const answer = await fetch(url + taskPath, {
      method: 'PATCH',
      headers: { Authorization: 'Bearer any', 'Content-Type': 'application/json' },
      body: '{"status":"finished"}',
    });
    const problem = (await answer.json()) as {
      errors: Array<{ pointer: string; message: string }>;
    };
    expect(problem.errors).toEqual([
      expect.objectContaining({ pointer: '/status', message: expect.stringContaining('done') }),
    ]);
  });

  it('leaves a valid request to Prism, and a request without a key to its 401', async () => {
    const valid = await fetch(url + '/v1/projects', {
      method: 'POST',
      headers: { Authorization: 'Bearer any', 'Content-Type': 'application/json' },
      body: '{"name":"Launch"}',
    });
    expect(valid.status).toBe(201);
    const keyless = await fetch(url + taskPath, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json' },
      body: '{"status":"finished"}',
    });
    expect(keyless.status).toBe(401);
  });
});

describe('the search and the bulk changes', () => {
  const document = YAML.parse(fs.readFileSync(openapiDocumentPath, 'utf8'));
  /** An example of the POST of `path`, of its request or of its 200, by name, its $ref followed. */
  const example = (path: string, of: 'request' | 'answer', name: string): unknown => {
    const post = document.paths[path].post;
    const media = of === 'request' ? post.requestBody : post.responses['200'];
    const found = media.content['application/json'].examples[name];
    return found.$ref
      ? document.components.examples[found.$ref.split('/').at(-1)].value
      : found.value;
  };
  const operations = [
    ['/v1/tasks/search', 'openLaunchTasks', 'firstPage'],
    ['/v1/tasks/bulk-update', 'byFilter', 'changed'],
    ['/v1/tasks/bulk-delete', 'byFilter', 'deleted'],
  ] as const;
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(url + path, {
      method: 'POST',
      headers: { Authorization: 'Bearer any', 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  /** The example of the schema of the POST of `path`'s 200. */
  const schemaExample = (path: string): unknown => {
    const { $ref } = document.paths[path].post.responses['200'].content['application/json'].schema;
    return document.components.schemas[$ref.split('/').at(-1)].example;
  };

  it.each(operations)(
    "in 2026-12-15, POST %s answers its 200 with the document's example, the one named when asked",
    async (path, request, answer) => {
      const body = example(path, 'request', request);
      const versions: Record<string, string>[] = [{}, { 'Api-Version': '2026-12-15' }];
      for (const headers of versions) {
        const response = await post(path, body, headers);
        expect(response.status).toBe(200);
        expect(response.headers.get('api-version')).toBe('2026-12-15');
        // Prism takes the schema's example before the response's first named one.
        expect([schemaExample(path), example(path, 'answer', answer)]).toContainEqual(
          await response.json(),
        );
      }
      const named = await post(path, body, { Prefer: `example=${answer}` });
      expect(await named.json()).toEqual(example(path, 'answer', answer));
    },
  );

  it('answers a dry run with its example when asked for it', async () => {
    for (const path of ['/v1/tasks/bulk-update', '/v1/tasks/bulk-delete']) {
      const response = await post(path, example(path, 'request', 'dryRun'), {
        Prefer: 'example=dryRun',
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual(example(path, 'answer', 'dryRun'));
    }
  });

  it("answers bulk-delete's 400 and 422, when asked for, with its own examples, not bulk-update's", async () => {
    /** The examples of the POST of `path`'s response `status`, by name, in order. */
    const problems = (path: string, status: number): Record<string, { value: unknown }> => {
      const response = document.paths[path].post.responses[String(status)];
      return (
        response.$ref ? document.components.responses[response.$ref.split('/').at(-1)] : response
      ).content['application/problem+json'].examples;
    };
    const path = '/v1/tasks/bulk-delete';
    const body = example(path, 'request', 'byFilter');
    for (const status of [400, 422]) {
      const own = problems(path, status);
      const updates = problems('/v1/tasks/bulk-update', status);
      const first = await post(path, body, { Prefer: `code=${status}` });
      expect(first.status).toBe(status);
      expect(await first.json()).toEqual(Object.values(own)[0].value);
      for (const [name, { value }] of Object.entries(own)) {
        const named = await post(path, body, { Prefer: `code=${status}, example=${name}` });
        expect([name, named.status, await named.json()]).toEqual([name, status, value]);
      }
      // What only a change can be refused for is not a delete's.
      const onlyUpdates = Object.entries(updates)
        .filter(
          ([, { value }]) =>
            !Object.values(own).some((o) => JSON.stringify(o.value) === JSON.stringify(value)),
        )
        .map(([name]) => name);
      expect(onlyUpdates).toEqual(status === 400 ? ['notABulkChange'] : ['tooManyLabels']);
    }
  });

  it.each(operations)(
    "in 2026-11-28, POST %s is the service's 405, with Allow",
    async (path, request) => {
      const body = JSON.stringify(example(path, 'request', request));
      const headers = {
        'Content-Type': 'application/json',
        'X-Request-Id': 'mock-parity',
        'Api-Version': '2026-11-28',
      };
      const fromMock = await fetch(url + path, {
        method: 'POST',
        headers: { ...headers, Authorization: 'Bearer any' },
        body,
      });
      const fromService = await service.send('POST', path, { key, headers, body });
      expect(fromMock.status).toBe(405);
      expect({
        status: fromMock.status,
        allow: fromMock.headers.get('allow'),
        version: fromMock.headers.get('api-version'),
        problem: await fromMock.json(),
      }).toEqual({
        status: fromService.status,
        allow: fromService.headers.get('allow'),
        version: fromService.headers.get('api-version'),
        problem: fromService.json,
      });
    },
  );

  it("answers a path no version has with the service's 404", async () => {
    const fromMock = await fetch(`${url}/v1/tasks/search/all`, {
      method: 'POST',
      headers: { Authorization: 'Bearer any', 'X-Request-Id': 'mock-parity' },
    });
    const fromService = await service.send('POST', '/v1/tasks/search/all', {
      key,
      headers: { 'X-Request-Id': 'mock-parity' },
    });
    expect(fromMock.status).toBe(404);
    expect(await fromMock.json()).toEqual(fromService.json);
  });
});
