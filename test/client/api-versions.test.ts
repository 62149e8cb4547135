/**
 * The client kit's API versions against the real service: a kit made in `2026-12-15` cancels a
 * task and reads its `completed_at`; a kit made without a version is in `2026-11-28` (it sends it
 * on every request, whatever the tenant's), where the same task is `done` without `completed_at`;
 * TASK_TRACKER_API_VERSION chooses the version of a kit that names none; a version the kit does
 * not know is refused when the kit is made. The types follow the version (the `@ts-expect-error`
 * lines are checked by tsc, in `npm run lint` and here).
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  apiVersions,
  createClient,
  defaultApiVersion,
  isProblem,
  type ApiVersion,
  type ClientOptions,
  type Project,
  type Task,
  type TaskTrackerClient,
  type TypedEvent,
  type WebhookEndpoint,
} from '../../clients/typescript/src';
import { issueApiKey } from '../../src/cli/issue-api-key';
import { projectRoot } from '../../src/paths';
import { supportedVersions, versionBeforeVersions } from '../../src/versions/versions';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let key: string;
/** The Api-Version header of every request a kit made, into `sent`. */
const recording = (sent: (string | null)[]) => (request: Request) => {
  sent.push(request.headers.get('api-version'));
  return fetch(request);
};
const kit = <V extends ApiVersion = '2026-11-28'>(options: Partial<ClientOptions<V>> = {}) =>
  createClient<V>({ baseUrl: api.baseUrl, apiKey: key, ...options });
/** What the default kit (`older`) sent. */
const olderSent: (string | null)[] = [];

let newest: TaskTrackerClient<'2026-12-15'>;
let older: TaskTrackerClient;
let projectId: string;

beforeAll(async () => {
  api = await startTestService({ config: { webhookAllowPrivateTargets: true } });
  // A tenant made now is pinned to the newest version: the default kit must not answer in it.
  key = await api.createKey('versions');
  // And the newest kit gets its version with a key of the tenant pinned to the older one.
  const olderKey = await issueApiKey(
    api.repositories,
    'versions',
    ['read', 'write'],
    undefined,
    '2026-11-28',
  );
  newest = kit({ apiVersion: '2026-12-15', apiKey: olderKey.key });
  older = kit({ fetch: recording(olderSent) });
  projectId = (await newest.projects.create({ name: 'versions' })).project_id;
});
afterAll(() => api.stop());

const environment = process.env.TASK_TRACKER_API_VERSION;
afterEach(() => {
  if (environment === undefined) delete process.env.TASK_TRACKER_API_VERSION;
  else process.env.TASK_TRACKER_API_VERSION = environment;
});

/** Whether a type has a property: checked where the answer is true or false, at compile time. */
type Has<T, K extends PropertyKey> = K extends keyof T ? true : false;

it('knows the versions the service supports, newest first, each with its generated types', () => {
  expect([...apiVersions]).toEqual(supportedVersions);
  expect(defaultApiVersion).toBe(versionBeforeVersions);
  const source = path.join(projectRoot, 'clients', 'typescript', 'src');
  for (const file of fs.readdirSync(path.join(projectRoot, 'openapi', 'versions'))) {
    const version = path.basename(file, '.yaml');
    expect(apiVersions).toContain(version);
    expect(fs.existsSync(path.join(source, `api-${version}.ts`))).toBe(true);
  }
});

it('types each version by its own document', () => {
  const typed: boolean[] = [
    true satisfies Has<Task<'2026-12-15'>, 'completed_at'>,
    false satisfies Has<Task<'2026-11-28'>, 'completed_at'>,
    // Without a version argument, the default version's.
    false satisfies Has<Task, 'completed_at'>,
    true satisfies Has<WebhookEndpoint<'2026-12-15'>, 'api_version'>,
    false satisfies Has<WebhookEndpoint, 'api_version'>,
    true satisfies 'cancelled' extends Task<'2026-12-15'>['status'] ? true : false,
    false satisfies 'cancelled' extends Task['status'] ? true : false,
    true satisfies Task extends Task<'2026-11-28'> ? true : false,
    true satisfies Project extends Project<'2026-11-28'> ? true : false,
  ];
  expect(typed).toEqual([true, false, false, true, false, true, false, true, true]);
});

it('in 2026-12-15, cancels a task and reads its completed_at', async () => {
  const task = await newest.tasks.create({ project_id: projectId, title: 'not needed' });
  expect(task.completed_at).toBeNull();
  const { data: cancelled, response } = await newest.tasks
    .update(task.task_id, { status: 'cancelled' }, { ifMatch: task })
    .withResponse();
  expect(response.headers.get('api-version')).toBe('2026-12-15');
  expect(cancelled.status).toBe('cancelled');
  expect(cancelled.completed_at).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
  // The typed paths are the version's too.
  const { data } = await newest.GET('/v1/tasks/{task_id}', {
    params: { path: { task_id: task.task_id } },
  });
  expect([data?.status, data?.completed_at]).toEqual(['cancelled', cancelled.completed_at]);
});

it('without apiVersion, is in 2026-11-28 on every request: a cancelled task reads as done, without completed_at', async () => {
  const task = await newest.tasks.create({ project_id: projectId, title: 'cancelled by newest' });
  const cancelled = await newest.tasks.update(task.task_id, { status: 'cancelled' });
  olderSent.length = 0;
  const { data: read, response } = await older.tasks.get(task.task_id).withResponse();
  expect(response.headers.get('api-version')).toBe('2026-11-28');
  expect(read.status).toBe('done');
  expect(read).not.toHaveProperty('completed_at');
  // @ts-expect-error: a 2026-11-28 task has no completed_at
  expect(read.completed_at).toBeUndefined();
  const done = await older.tasks.list(projectId, { status: ['done'] }).toArray({ max: 100 });
  expect(done.map((t) => t.task_id)).toContain(task.task_id);
  expect(done.every((t) => !('completed_at' in t))).toBe(true);
  const { data } = await older.GET('/v1/tasks/{task_id}', {
    params: { path: { task_id: task.task_id } },
  });
  // @ts-expect-error: nor through the typed paths
  expect(data?.completed_at).toBeUndefined();
  // The feed shows the change in each kit's version.
  const changeOf = (events: TypedEvent<ApiVersion>[]) =>
    events.find(
      (event) => event.type === 'task.updated' && event.data.object.task_id === task.task_id,
    )!.data.object;
  const feed = { limit: 200 };
  expect(changeOf((await older.events.page(feed)).data)).toEqual(read);
  expect(changeOf((await newest.events.page(feed)).data)).toEqual(cancelled);
  // And `cancelled` sent in 2026-11-28 is refused by the service (and by the compiler).
  const refused = await older.tasks
    // @ts-expect-error: 2026-11-28 has no cancelled status
    .update(task.task_id, { status: 'cancelled' })
    .catch((error: unknown) => error);
  expect(isProblem(refused, 'invalid-request') && refused.errors?.[0]?.pointer).toBe('/status');
  await older.tasks.delete(task.task_id);
  expect(olderSent.length).toBeGreaterThanOrEqual(6);
  expect(new Set(olderSent)).toEqual(new Set(['2026-11-28']));
});

it('makes webhook endpoints in its version, and reads them in it', async () => {
  const made = await newest.webhookEndpoints.create({ url: 'http://127.0.0.1:1029/newest' });
  expect(made.api_version).toBe('2026-12-15');
  const byOlder = await older.webhookEndpoints.create({ url: 'http://127.0.0.1:1029/older' });
  expect(byOlder).not.toHaveProperty('api_version');
  expect((await newest.webhookEndpoints.get(byOlder.webhook_endpoint_id)).api_version).toBe(
    '2026-11-28',
  );
  const read = await older.webhookEndpoints.get(made.webhook_endpoint_id);
  expect(read).not.toHaveProperty('api_version');
  // @ts-expect-error: a 2026-11-28 endpoint has no api_version
  expect(read.api_version).toBeUndefined();
});

it('takes its version from TASK_TRACKER_API_VERSION when the program names none', async () => {
  const task = await newest.tasks.create({ project_id: projectId, title: 'by the environment' });
  await newest.tasks.update(task.task_id, { status: 'cancelled' });
  process.env.TASK_TRACKER_API_VERSION = '2026-12-15';
  const sent: (string | null)[] = [];
  // Its types are still the default's: the environment is for programs that cannot change.
  const read: Task<ApiVersion> = await kit({ fetch: recording(sent) }).tasks.get(task.task_id);
  expect(sent).toEqual(['2026-12-15']);
  expect(read.status).toBe('cancelled');
  expect(read).toHaveProperty('completed_at');
  // apiVersion wins over it.
  expect((await kit({ apiVersion: '2026-11-28' }).tasks.get(task.task_id)).status).toBe('done');
  process.env.TASK_TRACKER_API_VERSION = '';
  expect((await kit().tasks.get(task.task_id)).status).toBe('done');
  process.env.TASK_TRACKER_API_VERSION = '2027-01-01';
  expect(() => kit()).toThrow(
    'TASK_TRACKER_API_VERSION "2027-01-01" is not an API version this kit knows: it knows 2026-12-15, 2026-11-28.',
  );
});

it('refuses a version it does not know when it is made, naming those it knows', () => {
  expect(() =>
    // @ts-expect-error: a version the kit does not know
    createClient({ baseUrl: api.baseUrl, apiKey: key, apiVersion: '2027-01-01' }),
  ).toThrow(RangeError);
  expect(() => kit({ apiVersion: '26-12-15' as ApiVersion })).toThrow(
    'apiVersion "26-12-15" is not an API version this kit knows: it knows 2026-12-15, 2026-11-28.',
  );
  expect(() => kit({ apiVersion: '' as ApiVersion })).toThrow(/it knows 2026-12-15, 2026-11-28/);
});
