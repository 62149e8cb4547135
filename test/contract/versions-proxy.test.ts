/**
 * Every operation of the API in each version, through Prism's validating proxy serving that
 * version's document in front of the real service (issue 45): requests and answers of
 * 2026-11-28 and of 2026-12-15 each break nothing of their own document — a cancelled task read in
 * 2026-11-28 included, and an endpoint made in one version read in the other. Each version is
 * made every operation of its own document (2026-11-28 has no search and no bulk changes).
 */
import fs from 'node:fs';
import { parse } from 'yaml';
import { documentFileOf } from '../../src/versions/documents';
import { loadDocument } from '../../src/http/document';
import { supportedVersions } from '../../src/versions/versions';
import { startPrism, type RunningPrism } from '../support/prism';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let receiver: WebhookReceiver;
const proxies = new Map<string, RunningPrism>();

beforeAll(async () => {
  [api, receiver] = await Promise.all([
    startTestService({ config: { webhookAllowPrivateTargets: true } }),
    startReceiver(),
  ]);
  for (const version of supportedVersions)
    proxies.set(version, await startPrism({ proxyTo: api.baseUrl }, documentFileOf(version)));
}, 120_000);
afterAll(async () => {
  for (const proxy of proxies.values()) await proxy.stop();
  await receiver.stop();
  await api.stop();
});

/** The operations of the version's own document. */
const documented = (version: string) =>
  Object.values(
    (version === supportedVersions[0]
      ? loadDocument().definition
      : (parse(fs.readFileSync(documentFileOf(version), 'utf8')) as { paths?: object })
    ).paths ?? {},
  ).flatMap((item) =>
    Object.values(item ?? {}).flatMap((operation) => {
      const id = (operation as { operationId?: string }).operationId;
      return id ? [id] : [];
    }),
  );

it.each(supportedVersions)(
  'answers every operation in %s as its own document says, through its validating proxy',
  async (version) => {
    const key = await api.createKey(`proxied-${version}`);
    const violations: string[] = [];
    const sent = new Set<string>();
    const call = async (operationId: string, method: string, path: string, body?: unknown) => {
      sent.add(operationId);
      const response = await fetch(proxies.get(version)!.url + path, {
        method,
        headers: {
          Authorization: `Bearer ${key}`,
          'Api-Version': version,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const found = response.headers.get('sl-violations');
      if (found) violations.push(`${operationId}: ${found}`);
      expect([operationId, response.headers.get('api-version')]).toEqual([operationId, version]);
      const text = await response.text();
      return { status: response.status, json: text ? JSON.parse(text) : undefined };
    };
    // A task cancelled in the newest version, which a client of any version may come to read.
    const newest = await api.createKey(`proxied-${version}`);
    const other = async (method: string, path: string, body?: unknown) =>
      (
        await api.send(method, path, {
          key: newest,
          headers: { 'Content-Type': 'application/json', 'Api-Version': supportedVersions[0] },
          body: body === undefined ? undefined : JSON.stringify(body),
        })
      ).json;

    const project = (await call('createProject', 'POST', '/v1/projects', { name: 'proxied' })).json;
    const projectPath = `/v1/projects/${project.project_id}`;
    await call('getProject', 'GET', projectPath);
    await call('updateProject', 'PATCH', projectPath, { description: 'through the proxy' });
    await call('listProjects', 'GET', '/v1/projects');
    const endpoint = (
      await call('createWebhookEndpoint', 'POST', '/v1/webhook-endpoints', {
        url: `${receiver.origin}/${version}`,
      })
    ).json;
    const task = (
      await call('createTask', 'POST', '/v1/tasks', { project_id: project.project_id, title: 't' })
    ).json;
    const taskPath = `/v1/tasks/${task.task_id}`;
    await call('updateTask', 'PATCH', taskPath, { status: 'done' });
    const cancelled = await other('POST', '/v1/tasks', {
      project_id: project.project_id,
      title: 'c',
    });
    await other('PATCH', `/v1/tasks/${cancelled.task_id}`, { status: 'cancelled' });
    expect((await call('getTask', 'GET', `/v1/tasks/${cancelled.task_id}`)).status).toBe(200);
    const listed = await call('listProjectTasks', 'GET', `${projectPath}/tasks?status=done`);
    expect(listed.json.data.length).toBe(version === '2026-11-28' ? 2 : 1);
    // A search, in the versions that have one.
    if (documented(version).includes('searchTasks')) {
      const searched = await call('searchTasks', 'POST', '/v1/tasks/search', {
        filter: {
          all: [{ project_id: { in: [project.project_id] } }, { status: { in: ['cancelled'] } }],
        },
      });
      expect(searched.json.data.map((one: { task_id: string }) => one.task_id)).toEqual([
        cancelled.task_id,
      ]);
    }
    // Bulk changes, in the versions that have them.
    if (documented(version).includes('updateTasksInBulk')) {
      const changed = await call('updateTasksInBulk', 'POST', '/v1/tasks/bulk-update', {
        task_ids: [cancelled.task_id],
        changes: { priority: 'high', labels_add: ['proxied'] },
      });
      expect(changed.json).toMatchObject({ matched: 1, changed: 1 });
      const deleted = await call('deleteTasksInBulk', 'POST', '/v1/tasks/bulk-delete', {
        filter: { labels: { has: 'proxied' } },
        dry_run: true,
      });
      expect(deleted.json).toEqual({
        matched: 1,
        changed: 1,
        task_ids: [cancelled.task_id],
        dry_run: true,
      });
    }
    const events = await call('listEvents', 'GET', '/v1/events?limit=50&wait=1');
    expect(events.status).toBe(200);

    const endpointPath = `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}`;
    await call('getWebhookEndpoint', 'GET', endpointPath);
    await call('updateWebhookEndpoint', 'PATCH', endpointPath, { description: 'proxied' });
    await call('listWebhookEndpoints', 'GET', '/v1/webhook-endpoints');
    await call('rotateWebhookEndpointSecret', 'POST', `${endpointPath}/rotate-secret`);
    await call('listWebhookDeliveries', 'GET', `${endpointPath}/deliveries`);
    const [event] = events.json.data;
    await call('createWebhookDelivery', 'POST', `${endpointPath}/deliveries`, {
      event_id: event.event_id,
    });
    await call('deleteTask', 'DELETE', taskPath);
    await call('deleteWebhookEndpoint', 'DELETE', endpointPath);
    await call('deleteProject', 'DELETE', projectPath);

    expect(violations).toEqual([]);
    expect([...sent].sort()).toEqual(documented(version).sort());
  },
  90_000,
);
