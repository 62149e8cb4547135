/**
 * The client kit's lists and problems against the real service: every list as an async iterable,
 * page by page, and into an array only with a bound; failures as ProblemErrors whose types are
 * the document's.
 */
import {
  createClient,
  isProblem,
  problemTypes,
  ProblemError,
  type TaskTrackerClient,
} from '../../clients/typescript/src';
import { loadDocument } from '../../src/http/document';
import { documentedProblems } from '../../src/http/problem-pages';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let client: TaskTrackerClient;
let projectId: string;
const titles = Array.from({ length: 7 }, (_, i) => `task ${i}`);

beforeAll(async () => {
  api = await startTestService({ config: { webhookAllowPrivateTargets: true } });
  client = createClient({ baseUrl: api.baseUrl, apiKey: await api.createKey('lists') });
  projectId = (await client.projects.create({ name: 'lists' })).project_id;
  for (const title of titles) await client.tasks.create({ project_id: projectId, title });
});
afterAll(() => api.stop());

it('iterates every task of a project in order, across pages', async () => {
  const seen: string[] = [];
  for await (const task of client.tasks.list(projectId, { limit: 3 })) seen.push(task.title);
  expect(seen).toEqual(titles);
});

it('gives the pages as the service answered them', async () => {
  const sizes: number[] = [];
  for await (const page of client.tasks.list(projectId, { limit: 3, sort: '-created_at' }).pages())
    sizes.push(page.data.length);
  expect(sizes).toEqual([3, 3, 1]);
});

it('reads into an array only up to max, and refuses to run without one', async () => {
  expect(
    (await client.tasks.list(projectId, { limit: 2 }).toArray({ max: 5 })).map(
      (task) => task.title,
    ),
  ).toEqual(titles.slice(0, 5));
  await expect(client.tasks.list(projectId).toArray({} as { max: number })).rejects.toThrow(
    TypeError,
  );
});

it('filters as the list does', async () => {
  const [first] = await client.tasks.list(projectId).toArray({ max: 1 });
  await client.tasks.update(first.task_id, { status: 'done' });
  const done = await client.tasks.list(projectId, { status: ['done'] }).toArray({ max: 100 });
  expect(done.map((task) => task.task_id)).toEqual([first.task_id]);
});

it('lists projects, webhook endpoints and their deliveries the same way', async () => {
  expect(
    (await client.projects.list({ limit: 1 }).toArray({ max: 10 })).map(
      (project) => project.project_id,
    ),
  ).toEqual([projectId]);
  const endpoint = await client.webhookEndpoints.create({ url: 'http://127.0.0.1:1029/hook' });
  expect(endpoint.secret).toMatch(/^whsec_/);
  const endpoints = await client.webhookEndpoints.list().toArray({ max: 10 });
  expect(endpoints.map((e) => e.webhook_endpoint_id)).toEqual([endpoint.webhook_endpoint_id]);
  const [event] = (await client.events.page({ limit: 1 })).data;
  const delivery = await client.webhookEndpoints.redeliver(
    endpoint.webhook_endpoint_id,
    event.event_id,
  );
  const deliveries = await client.webhookEndpoints
    .deliveries(endpoint.webhook_endpoint_id)
    .toArray({ max: 10 });
  expect(deliveries.map((d) => d.delivery_id)).toContain(delivery.delivery_id);
});

it('throws a ProblemError of the answer: type, status, detail, request id, errors', async () => {
  const missing = await client.tasks
    .get('0193a000-0000-7000-8000-000000000000')
    .catch((e: unknown) => e);
  expect(isProblem(missing, 'not-found')).toBe(true);
  expect(isProblem(missing, 'unknown-project')).toBe(false);
  const problem = missing as ProblemError;
  expect([problem.status, problem.type, problem.requestId]).toEqual([
    404,
    'not-found',
    expect.any(String),
  ]);
  const invalid = (await client.tasks
    .create({ project_id: projectId, title: '' })
    .catch((e: unknown) => e)) as ProblemError;
  expect(invalid.type).toBe('invalid-request');
  expect(invalid.errors).toEqual([expect.objectContaining({ in: 'body', pointer: '/title' })]);
  const unauthenticated = await createClient({ baseUrl: api.baseUrl, apiKey: 'tt_nope' })
    .projects.get(projectId)
    .catch((e: unknown) => e);
  expect(isProblem(unauthenticated, 'unauthenticated')).toBe(true);
});

it("names exactly the document's problem types", () => {
  expect([...problemTypes].sort()).toEqual(
    documentedProblems(loadDocument())
      .map((row) => row.kind)
      .sort(),
  );
});
