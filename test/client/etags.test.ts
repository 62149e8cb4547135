/**
 * The client kit's conditional requests against the real service: what get, create and update
 * return stands for its ETag in `ifMatch` and `ifNoneMatch`, with no field added to it; a stale
 * one is a typed precondition-failed and changes nothing; `.withResponse()` gives the raw answer.
 */
import {
  createClient,
  etagOf,
  isProblem,
  type TaskTrackerClient,
} from '../../clients/typescript/src';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let client: TaskTrackerClient;

beforeAll(async () => {
  api = await startTestService();
  client = createClient({ baseUrl: api.baseUrl, apiKey: await api.createKey('etags') });
});
afterAll(() => api.stop());

it('takes what create, get and update returned as If-Match, and refuses a stale one as precondition-failed', async () => {
  const project = await client.projects.create({ name: 'conditional' });
  const created = await client.tasks.create({ project_id: project.project_id, title: 'first' });
  expect(Object.keys(created).sort()).toEqual(
    Object.keys(await client.tasks.get(created.task_id)).sort(),
  );
  expect(etagOf(created)).toMatch(/^"\d+"$/);
  const updated = await client.tasks.update(
    created.task_id,
    { status: 'in_progress' },
    { ifMatch: created },
  );
  expect(etagOf(updated)).not.toBe(etagOf(created));
  const stale = await client.tasks
    .update(created.task_id, { status: 'done' }, { ifMatch: created })
    .catch((error: unknown) => error);
  expect(isProblem(stale, 'precondition-failed')).toBe(true);
  const read = await client.tasks.get(created.task_id);
  expect(read.status).toBe('in_progress');
  const again = await client.tasks.update(created.task_id, { title: 'second' }, { ifMatch: read });
  expect(again.title).toBe('second');
  await expect(client.tasks.delete(created.task_id, { ifMatch: read })).rejects.toMatchObject({
    type: 'precondition-failed',
  });
  await expect(client.tasks.delete(created.task_id, { ifMatch: again })).resolves.toBe('deleted');

  const renamed = await client.projects.update(
    project.project_id,
    { name: 'renamed' },
    { ifMatch: project },
  );
  await expect(
    client.projects.update(project.project_id, { name: 'lost update' }, { ifMatch: project }),
  ).rejects.toMatchObject({ type: 'precondition-failed', status: 412 });
  await expect(
    client.projects.update(project.project_id, { description: 'ok' }, { ifMatch: etagOf(renamed) }),
  ).resolves.toMatchObject({ name: 'renamed', description: 'ok' });
});

it('answers the copy held when If-None-Match finds it unchanged, and the new one otherwise', async () => {
  const project = await client.projects.create({ name: 'cached' });
  const { data, response } = await client.projects
    .get(project.project_id, { ifNoneMatch: project })
    .withResponse();
  expect(response.status).toBe(304);
  expect(data).toBe(project);
  await expect(
    client.projects.get(project.project_id, { ifNoneMatch: etagOf(project)! }),
  ).resolves.toBeUndefined();
  await client.projects.update(project.project_id, { name: 'changed' });
  const fresh = await client.projects.get(project.project_id, { ifNoneMatch: project });
  expect(fresh).not.toBe(project);
  expect(fresh.name).toBe('changed');
});

it('says so at once when an object it never returned stands for an ETag', async () => {
  const project = await client.projects.create({ name: 'copied' });
  expect(() =>
    client.projects.update(project.project_id, { name: 'x' }, { ifMatch: { ...project } }),
  ).toThrow(/ifMatch was given an object the kit holds no ETag for/);
  const { data, response } = await client.projects.get(project.project_id).withResponse();
  expect(response.headers.get('etag')).toBe(etagOf(data));
  expect(response.headers.get('x-request-id')).toMatch(/.+/);
});

it('does the same for webhook endpoints, and answers a retried rotation with the same secret', async () => {
  const endpoint = await client.webhookEndpoints.create({ url: 'https://93.184.215.14/kit' });
  const changed = await client.webhookEndpoints.update(
    endpoint.webhook_endpoint_id,
    { description: 'first' },
    { ifMatch: endpoint },
  );
  expect(etagOf(changed)).not.toBe(etagOf(endpoint));
  await expect(
    client.webhookEndpoints.update(
      endpoint.webhook_endpoint_id,
      { description: 'stale' },
      { ifMatch: endpoint },
    ),
  ).rejects.toMatchObject({ status: 412 });
  expect(
    await client.webhookEndpoints.get(endpoint.webhook_endpoint_id, { ifNoneMatch: changed }),
  ).toBe(changed);
  const rotated = await client.webhookEndpoints.rotateSecret(endpoint.webhook_endpoint_id, {
    idempotencyKey: 'kit-rotation',
  });
  const again = await client.webhookEndpoints.rotateSecret(endpoint.webhook_endpoint_id, {
    idempotencyKey: 'kit-rotation',
  });
  expect(again.secret).toBe(rotated.secret);
  // The rotation changed the endpoint: the ETag held before it is stale.
  await expect(
    client.webhookEndpoints.delete(endpoint.webhook_endpoint_id, { ifMatch: changed }),
  ).rejects.toMatchObject({ status: 412 });
  const current = await client.webhookEndpoints.get(endpoint.webhook_endpoint_id);
  await client.webhookEndpoints.delete(endpoint.webhook_endpoint_id, { ifMatch: current });
});
