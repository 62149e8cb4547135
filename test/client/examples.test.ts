/**
 * The client kit's examples, run against the real service: the sync worker's copy equals the
 * service's data after changes made before, during and after it starts; the webhook receiver
 * handles each event once although the service redelivers it.
 */
import type { AddressInfo } from 'node:net';
import { createClient, type TaskTrackerClient } from '@task-tracker/client';
import { statusBoard } from '../../clients/typescript/examples/status-board';
import { runSyncWorker, type Mirror } from '../../clients/typescript/examples/sync-worker';
import { createReceiver } from '../../clients/typescript/examples/webhook-receiver';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let client: TaskTrackerClient;

beforeAll(async () => {
  api = await startTestService({ config: { webhookAllowPrivateTargets: true } });
  client = createClient({ baseUrl: api.baseUrl, apiKey: await api.createKey('examples') });
});
afterAll(() => api.stop());

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it('sync-worker: resynchronises, then follows, and its copy equals the service', async () => {
  const before = await client.projects.create({ name: 'before' });
  for (let i = 0; i < 5; i++)
    await client.tasks.create({ project_id: before.project_id, title: `before ${i}` });
  const mirror: Mirror = { projects: new Map(), tasks: new Map() };
  const stop = new AbortController();
  const running = runSyncWorker(client, mirror, stop.signal);
  const during = await client.projects.create({ name: 'during' });
  const tasks = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      client.tasks.create({ project_id: during.project_id, title: `during ${i}` }),
    ),
  );
  await client.tasks.update(tasks[0].task_id, { status: 'done' });
  await client.tasks.delete(tasks[1].task_id);
  await client.projects.delete(before.project_id);
  const service = async () => {
    const projects = await client.projects.list().toArray({ max: 100 });
    const all = (
      await Promise.all(projects.map((p) => client.tasks.list(p.project_id).toArray({ max: 100 })))
    ).flat();
    return {
      projects: Object.fromEntries(projects.map((p) => [p.project_id, p])),
      tasks: Object.fromEntries(all.map((t) => [t.task_id, t])),
    };
  };
  const expected = await service();
  await until(
    () =>
      mirror.tasks.size === Object.keys(expected.tasks).length &&
      mirror.projects.size === Object.keys(expected.projects).length &&
      !mirror.tasks.has(tasks[1].task_id),
  );
  await until(() => mirror.tasks.get(tasks[0].task_id)?.status === 'done');
  stop.abort();
  await running;
  expect({
    projects: Object.fromEntries(mirror.projects),
    tasks: Object.fromEntries(mirror.tasks),
  }).toEqual(expected);
});

it('webhook-receiver: verifies each delivery and handles each event once, redeliveries included', async () => {
  const handled: string[] = [];
  const endpoint = await client.webhookEndpoints.create({
    url: 'http://127.0.0.1:1029/placeholder',
  });
  const server = createReceiver([endpoint.secret], (event) => void handled.push(event.event_id));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    await client.webhookEndpoints.update(endpoint.webhook_endpoint_id, {
      url: `http://127.0.0.1:${port}/hook`,
    });
    const project = await client.projects.create({ name: 'hooked' });
    await client.projects.update(project.project_id, { name: 'renamed' });
    await until(() => handled.length === 2);
    // The service sends the first event again, with the same webhook-id: the receiver answers it and handles nothing.
    await client.webhookEndpoints.redeliver(endpoint.webhook_endpoint_id, handled[0]);
    const succeeded = async () =>
      (
        await client.webhookEndpoints.deliveries(endpoint.webhook_endpoint_id).toArray({ max: 10 })
      ).filter((d) => d.status === 'succeeded');
    await until(async () => (await succeeded()).length === 3);
    expect((await succeeded()).map((d) => d.event_id).sort()).toEqual(
      [handled[0], ...handled].sort(),
    );
    expect(handled).toHaveLength(2);
    expect(new Set(handled).size).toBe(2);
  } finally {
    server.close();
  }
});

it('status-board: runs unchanged in 2026-11-28, where a cancelled task is done', async () => {
  const newest = createClient({
    baseUrl: api.baseUrl,
    apiKey: await api.createKey('status-board'),
    apiVersion: '2026-12-15',
  });
  const project = await newest.projects.create({ name: 'board' });
  const open = await newest.tasks.create({ project_id: project.project_id, title: 'open' });
  const dropped = await newest.tasks.create({ project_id: project.project_id, title: 'dropped' });
  await newest.tasks.update(dropped.task_id, { status: 'cancelled' });
  expect(open.status).toBe('pending');
  const key = await api.createKey('status-board');
  expect(await statusBoard(api.baseUrl, key, project.project_id)).toEqual([
    'To do: open',
    'Done: dropped',
  ]);
});
