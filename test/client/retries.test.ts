/**
 * The client kit's retries against the real service, behind a proxy that loses answers after the
 * service has handled the request: a create retried with its one Idempotency-Key makes one task
 * and returns the first answer (a rotation is sent again with the key the kit gave it); a DELETE
 * whose answer was lost and whose retry finds nothing says "deleted or already absent", never a
 * deletion it cannot know of; a PATCH without If-Match is
 * never sent twice, and one with it whose retry is refused is told as what the resource shows (the
 * change made, or the first attempt's outcome unknown); a refusal's Retry-After is waited for.
 */
import {
  AnswerLostError,
  createClient,
  isProblem,
  ProblemError,
} from '../../clients/typescript/src';
import { startAnswerLosingProxy, type AnswerLosingProxy } from '../support/answer-losing-proxy';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let proxy: AnswerLosingProxy;
let key: string;
let projectId: string;

const kit = (options: { maxRetries?: number; timeoutMs?: number } = {}) =>
  createClient({
    baseUrl: proxy.url,
    apiKey: key,
    retry: { baseDelayMs: 20, maxDelayMs: 100 },
    ...options,
  });

beforeAll(async () => {
  api = await startTestService();
  proxy = await startAnswerLosingProxy(api.baseUrl);
  key = await api.createKey('retries');
  projectId = (await kit().projects.create({ name: 'retries' })).project_id;
});
afterAll(async () => {
  await proxy.stop();
  await api.stop();
});
afterEach(() => proxy.interfere(() => undefined));

const tasksOfProject = async () =>
  (await kit().tasks.list(projectId).toArray({ max: 1000 })).map((task) => task.task_id);

it('retries a create whose answer was lost with the same Idempotency-Key: one task, the first answer', async () => {
  const before = await tasksOfProject();
  let lost = 0;
  proxy.interfere((request) =>
    request.method === 'POST' && request.path === '/v1/tasks' && lost++ < 2 ? 'lose' : undefined,
  );
  const task = await kit().tasks.create({ project_id: projectId, title: 'sent three times' });
  const posts = proxy.seen
    .filter((request) => request.method === 'POST' && request.path === '/v1/tasks')
    .slice(-3);
  expect(posts).toHaveLength(3);
  const keys = new Set(posts.map((request) => request.headers['idempotency-key']));
  expect(keys.size).toBe(1);
  expect([...keys][0]).toMatch(/^[0-9a-f-]{36}$/);
  const after = await tasksOfProject();
  expect(after.filter((id) => !before.includes(id))).toEqual([task.task_id]);
});

it("keeps the caller's own Idempotency-Key on every attempt", async () => {
  let lost = false;
  proxy.interfere((request) =>
    request.method === 'POST' && !lost ? ((lost = true), 'lose') : undefined,
  );
  const first = await kit().projects.create({ name: 'keyed' }, { idempotencyKey: 'caller-key-1' });
  const again = await kit().projects.create({ name: 'keyed' }, { idempotencyKey: 'caller-key-1' });
  expect(again).toEqual(first);
  expect(
    proxy.seen.filter((request) => request.headers['idempotency-key'] === 'caller-key-1'),
  ).toHaveLength(3);
});

it('says "deleted or already absent" when the retry of a DELETE whose answer was lost finds nothing', async () => {
  const task = await kit().tasks.create({ project_id: projectId, title: 'to delete' });
  let lost = false;
  proxy.interfere((request) =>
    request.method === 'DELETE' && !lost ? ((lost = true), 'lose') : undefined,
  );
  await expect(kit().tasks.delete(task.task_id)).resolves.toBe('deleted or already absent');
  expect(
    proxy.seen.filter(
      (request) => request.method === 'DELETE' && request.path === `/v1/tasks/${task.task_id}`,
    ),
  ).toHaveLength(2);
  await expect(kit().tasks.get(task.task_id)).rejects.toMatchObject({ type: 'not-found' });
  // An id that never existed, its first answer (404) lost: not reported as deleted either.
  lost = false;
  await expect(kit().tasks.delete('0193a000-0000-7000-8000-00000000dead')).resolves.toBe(
    'deleted or already absent',
  );
  // Without a lost answer first, a 404 stays a 404, and a deletion answered is 'deleted'.
  await expect(kit().tasks.delete(task.task_id)).rejects.toThrow(ProblemError);
  const other = await kit().tasks.create({ project_id: projectId, title: 'deleted plainly' });
  await expect(kit().tasks.delete(other.task_id)).resolves.toBe('deleted');
});

it('gives a rotation a key of its own, and sends it again with that key when its answer was lost', async () => {
  const sent: Request[] = [];
  const client = createClient({
    baseUrl: 'http://127.0.0.1:1',
    apiKey: 'tt_unused',
    retry: { baseDelayMs: 1, maxDelayMs: 1 },
    fetch: async (request) => {
      sent.push(request);
      if (sent.length === 1) throw new TypeError('fetch failed');
      return Response.json({ secret: 'whsec_c2VjcmV0' });
    },
  });
  await expect(
    client.webhookEndpoints.rotateSecret('0193a5c0-4e21-7b10-9c2d-3e4f5a6b7c8d'),
  ).resolves.toEqual({ secret: 'whsec_c2VjcmV0' });
  const keys = sent.map((request) => request.headers.get('idempotency-key'));
  expect(keys).toHaveLength(2);
  expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
  expect(keys[1]).toBe(keys[0]);
});

it('never sends a PATCH twice without If-Match', async () => {
  const task = await kit().tasks.create({ project_id: projectId, title: 'to change' });
  const patches = () => proxy.seen.filter((request) => request.method === 'PATCH').length;
  proxy.interfere((request) => (request.method === 'PATCH' ? 'lose' : undefined));
  const before = patches();
  const lost = await kit()
    .tasks.update(task.task_id, { status: 'done' })
    .catch((error: unknown) => error);
  expect(patches() - before).toBe(1);
  expect(lost).toBeInstanceOf(AnswerLostError);
  expect((lost as AnswerLostError).message).toMatch(
    new RegExp(
      `^The answer to PATCH /v1/tasks/${task.task_id} was lost \\(.+\\): whether the service made the change is unknown\\. Read the resource to see; a change sent with ifMatch is retried safely\\.$`,
    ),
  );
  // It was made, as the message allows.
  expect((await kit().tasks.get(task.task_id)).status).toBe('done');
});

it('reports a PATCH with If-Match whose answer was lost as made when its retry meets 412 and the task is as asked', async () => {
  const client = kit();
  const task = await client.tasks.create({ project_id: projectId, title: 'to change' });
  const patches = () => proxy.seen.filter((request) => request.method === 'PATCH').length;
  let lost = false;
  proxy.interfere((request) =>
    request.method === 'PATCH' && !lost ? ((lost = true), 'lose') : undefined,
  );
  const before = patches();
  const { data: updated, response } = await client.tasks
    .update(task.task_id, { status: 'in_progress', description: null }, { ifMatch: task })
    .withResponse();
  expect(patches() - before).toBe(2);
  expect(response.headers.get('task-tracker-client-outcome')).toBe('already-applied');
  expect(updated).toMatchObject({ task_id: task.task_id, status: 'in_progress' });
  // What it answered carries the current ETag: a next change conditional on it goes through.
  await expect(
    client.tasks.update(task.task_id, { status: 'done' }, { ifMatch: updated }),
  ).resolves.toMatchObject({ status: 'done' });
});

it("says the first attempt's outcome is unknown when the retried PATCH meets 412 and the task is not as asked", async () => {
  const client = kit();
  const task = await client.tasks.create({ project_id: projectId, title: 'contended' });
  // Someone else changes it first: the kit's change (with the old ETag) is refused, and its answer lost.
  await client.tasks.update(task.task_id, { status: 'done' });
  let lost = false;
  proxy.interfere((request) =>
    request.method === 'PATCH' && !lost ? ((lost = true), 'lose') : undefined,
  );
  const refused = await client.tasks
    .update(task.task_id, { status: 'in_progress' }, { ifMatch: task })
    .catch((error: unknown) => error);
  expect(isProblem(refused, 'precondition-failed')).toBe(true);
  const problem = refused as ProblemError;
  expect(problem.status).toBe(412);
  expect(problem.detail).toMatch(/first attempt's answer was lost, so its outcome is unknown/);
  expect(problem.problem.outcome_unknown).toBe(true);
  expect((await client.tasks.get(task.task_id)).status).toBe('done');
  // A 412 met without a lost answer first is the service's own, as it was.
  const plain = await client.tasks
    .update(task.task_id, { status: 'in_progress' }, { ifMatch: task })
    .catch((error: unknown) => error);
  expect((plain as ProblemError).detail).toBe(
    'The task has changed since the ETag you sent; read it again and retry.',
  );
});

it("waits for a 429's Retry-After, then succeeds", async () => {
  let refused = 0;
  proxy.interfere((request) =>
    request.method === 'GET' && request.path.startsWith('/v1/projects/') && refused++ === 0
      ? {
          status: 429,
          headers: { 'retry-after': '1' },
          body: JSON.stringify({
            type: '/problems/rate-limited',
            title: 'Too many requests',
            status: 429,
            detail: 'slow down',
          }),
        }
      : undefined,
  );
  const started = Date.now();
  const project = await kit().projects.get(projectId);
  expect(project.project_id).toBe(projectId);
  expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
});

it('gives up after maxRetries with the last problem, its Retry-After and request id', async () => {
  const limited = await startTestService({ config: { rateLimitPerMinute: 1 } });
  try {
    const limitedKey = await limited.createKey('limited');
    const client = createClient({ baseUrl: limited.baseUrl, apiKey: limitedKey, maxRetries: 0 });
    await client.projects.list().toArray({ max: 1 });
    const error = await client.projects
      .list()
      .toArray({ max: 1 })
      .catch((e: unknown) => e);
    expect(isProblem(error, 'rate-limited')).toBe(true);
    const problem = error as ProblemError;
    expect(problem.status).toBe(429);
    expect(problem.retryAfter).toBeGreaterThan(0);
    expect(problem.requestId).toMatch(/.+/);
  } finally {
    await limited.stop();
  }
});

it('does not wait for a Retry-After longer than it will wait', async () => {
  proxy.interfere((request) =>
    request.method === 'GET'
      ? {
          status: 503,
          headers: { 'retry-after': '3600' },
          body: JSON.stringify({
            type: '/problems/service-unavailable',
            title: 'Service unavailable',
            status: 503,
            detail: 'down',
          }),
        }
      : undefined,
  );
  const started = Date.now();
  const error = await kit()
    .projects.get(projectId)
    .catch((e: unknown) => e);
  expect(isProblem(error, 'service-unavailable')).toBe(true);
  expect(Date.now() - started).toBeLessThan(5000);
});
