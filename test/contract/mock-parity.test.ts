/**
 * A consumer's view of the main flows, sent to the Prism mock and to the real service: the mock
 * must answer with the same status codes and the same shapes, so a client built against the mock
 * works against the service.
 */
import createClient from 'openapi-fetch';
import type { paths } from '../../generated/api';
import { assertConformsToContract } from '../support/contract';
import { startPrism, type RunningPrism } from '../support/prism';
import { startTestService, type TestService } from '../support/test-service';

let mock: RunningPrism;
let dynamicMock: RunningPrism;
let service: TestService;
let key: string;

beforeAll(async () => {
  [mock, dynamicMock, service] = await Promise.all([
    startPrism({ mock: 'static' }),
    startPrism({ mock: 'dynamic' }),
    startTestService(),
  ]);
  key = await service.createKey('consumer');
});
afterAll(async () => {
  await Promise.all([mock.stop(), dynamicMock.stop(), service.stop()]);
});

/** The structure of a JSON value: keys and value types, with null matching any type. */
type Shape = string | null | Shape[] | { [key: string]: Shape };
function shapeOf(value: unknown): Shape {
  if (value === null) return null;
  if (Array.isArray(value)) return value.length === 0 ? [] : [shapeOf(value[0])];
  if (typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value as object)
        .sort()
        .map(([k, v]) => [k, shapeOf(v)]),
    );
  return typeof value;
}
function sameShape(a: Shape, b: Shape): boolean {
  if (a === null || b === null) return true;
  if (Array.isArray(a) || Array.isArray(b))
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      (a.length === 0 || b.length === 0 || sameShape(a[0], b[0]))
    );
  if (typeof a === 'object' || typeof b === 'object') {
    if (typeof a !== 'object' || typeof b !== 'object') return false;
    const keys = Object.keys(a);
    return keys.join() === Object.keys(b).join() && keys.every((k) => sameShape(a[k], b[k]));
  }
  return a === b;
}

/** A client for one server that records status and body of every answer, checked against the document. */
function consumer(
  baseUrl: string,
  answers: Array<{ step: string; status: number; body: unknown }>,
  step: () => string,
) {
  return createClient<paths>({
    baseUrl,
    headers: { Authorization: `Bearer ${key}` },
    fetch: async (request: Request) => {
      const response = await fetch(request);
      const text = await response.clone().text();
      await assertConformsToContract(request.method, new URL(request.url).pathname, {
        status: response.status,
        headers: withCharset(response.headers),
        text,
      });
      answers.push({
        step: step(),
        status: response.status,
        body: text ? JSON.parse(text) : undefined,
      });
      return response;
    },
  });
}

/** Prism's mock leaves the charset off its Content-Type; the shape check does not care. */
function withCharset(headers: Headers): Headers {
  const copy = new Headers(headers);
  const type = copy.get('content-type');
  if (type && !/charset/i.test(type)) copy.set('content-type', `${type}; charset=utf-8`);
  return copy;
}

async function mainFlows(baseUrl: string) {
  const answers: Array<{ step: string; status: number; body: unknown }> = [];
  let current = '';
  const client = consumer(baseUrl, answers, () => current);
  const step = (name: string) => (current = name);

  step('create a project');
  const { data: project } = await client.POST('/v1/projects', {
    body: { name: 'Website relaunch', description: 'Autumn launch' },
  });
  step('add a task');
  const { data: task } = await client.POST('/v1/tasks', {
    body: {
      project_id: project!.project_id,
      title: 'Write the announcement',
      description: 'Two paragraphs',
    },
  });
  step('add a second task');
  await client.POST('/v1/tasks', {
    body: {
      project_id: project!.project_id,
      title: 'Book the photographer',
      description: 'Before Friday',
    },
  });
  step('start the task');
  await client.PATCH('/v1/tasks/{task_id}', {
    params: { path: { task_id: task!.task_id } },
    body: { status: 'in_progress' },
  });
  step('read the task');
  await client.GET('/v1/tasks/{task_id}', { params: { path: { task_id: task!.task_id } } });
  step("list the project's tasks");
  await client.GET('/v1/projects/{project_id}/tasks', {
    params: {
      path: { project_id: project!.project_id },
      query: { status: ['pending', 'in_progress'] },
    },
  });
  step('list projects');
  await client.GET('/v1/projects');
  step('read the project');
  await client.GET('/v1/projects/{project_id}', {
    params: { path: { project_id: project!.project_id } },
  });
  step('delete the task');
  await client.DELETE('/v1/tasks/{task_id}', { params: { path: { task_id: task!.task_id } } });
  step('rename the project');
  await client.PATCH('/v1/projects/{project_id}', {
    params: { path: { project_id: project!.project_id } },
    body: { name: 'Relaunch' },
  });
  step('delete the project');
  await client.DELETE('/v1/projects/{project_id}', {
    params: { path: { project_id: project!.project_id } },
  });
  step('read the events');
  await client.GET('/v1/events', { params: { query: { limit: 20 } } });
  return answers;
}

it('answers the main flows with the same status codes and shapes as the service', async () => {
  const [fromMock, fromService] = await Promise.all([
    mainFlows(mock.url),
    mainFlows(service.baseUrl),
  ]);
  expect(fromMock.map((a) => [a.step, a.status])).toEqual(
    fromService.map((a) => [a.step, a.status]),
  );
  expect(fromService.map((a) => a.status)).toEqual([
    201, 201, 201, 200, 200, 200, 200, 200, 204, 200, 204, 200,
  ]);
  for (const [i, real] of fromService.entries()) {
    const mocked = fromMock[i];
    expect([real.step, sameShape(shapeOf(mocked.body), shapeOf(real.body))]).toEqual([
      real.step,
      true,
    ]);
  }
});

it('generates, in dynamic mode, data the document accepts, with the same status codes', async () => {
  // consumer() checks every answer against the document; generated data must pass too.
  const [generated, fromService] = await Promise.all([
    mainFlows(dynamicMock.url),
    mainFlows(service.baseUrl),
  ]);
  expect(generated.map((a) => [a.step, a.status])).toEqual(
    fromService.map((a) => [a.step, a.status]),
  );
});

it('refuses a request without a key and a body that breaks the schema as the service does', async () => {
  for (const baseUrl of [mock.url, service.baseUrl]) {
    const noKey = await fetch(`${baseUrl}/v1/projects`);
    expect([baseUrl, noKey.status]).toEqual([baseUrl, 401]);
    // Prism answers a broken body with 422 where the operation documents one (the two POSTs),
    // so the check uses an operation whose only refusal of a broken body is 400.
    const invalid = await fetch(`${baseUrl}/v1/tasks/0193a5b3-1d20-7e55-8c3f-6a7b8c9d0e12`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ status: 'finished' }),
    });
    expect([baseUrl, invalid.status, ((await invalid.json()) as { type: string }).type]).toEqual([
      baseUrl,
      400,
      '/problems/invalid-request',
    ]);
  }
});
