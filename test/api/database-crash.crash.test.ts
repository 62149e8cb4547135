/**
 * MariaDB killed mid-load and started again: every task acknowledged with 201 exists exactly
 * once, nothing else is answered but 201 or 503, and the service serves again by itself; with an
 * Idempotency-Key on each create, a retry of every key finds exactly one task per key.
 */
import { startService, type RunningService } from '../../src/server';
import { issueApiKey } from '../../src/cli/issue-api-key';
import { createRepositories } from '../../src/all-repositories';
import { OwnMariaDb } from '../support/own-mariadb';
import { retryEveryKey, startKeyedCreates, taskIdsByTitle } from '../support/keyed-creates';
import { testConfig } from '../support/test-config';

let database: OwnMariaDb;
let service: RunningService;
let key: string;
let projectId: string;

beforeAll(async () => {
  database = await OwnMariaDb.create();
  service = await startService(testConfig({ client: 'mysql', url: database.url }));
  const repositories = createRepositories(service.knex);
  key = (await issueApiKey(repositories, 'acme', ['read', 'write'])).key;
  const tenant = await repositories.tenants.findOrCreate('acme');
  projectId = (
    await repositories.inTransaction('fixture', (write) =>
      repositories.projects.create(tenant.tenant_id, { name: 'crash', description: '' }, write),
    )
  ).value.project_id;
}, 120_000);
afterAll(async () => {
  await service?.stop();
  await database?.destroy();
});

it('acknowledges only what it committed, and recovers without a restart', async () => {
  const acknowledged: Array<{ taskId: string; at: number }> = [];
  const statuses = new Map<number, number>();
  let stop = false;
  let sequence = 0;
  const client = async () => {
    while (!stop) {
      const title = `task ${sequence++}`;
      const res = await fetch(`${service.url}/v1/tasks`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ project_id: projectId, title }),
      });
      const body = (await res.json()) as { task_id?: string };
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status === 201) acknowledged.push({ taskId: body.task_id!, at: Date.now() });
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const clients = Array.from({ length: 8 }, client);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await database.crash();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const restartedAt = Date.now();
  await database.start();
  await new Promise((resolve) => setTimeout(resolve, 3000));
  stop = true;
  await Promise.all(clients);

  expect([...statuses.keys()].sort()).toEqual([201, 503]);
  expect(acknowledged.some((a) => a.at > restartedAt)).toBe(true);
  const ids = acknowledged.map((a) => a.taskId);
  const rows: Array<{ task_id: string }> = await service
    .knex('tasks')
    .select('task_id')
    .whereIn('task_id', ids);
  expect(rows.length).toBe(ids.length);
  expect(new Set(rows.map((r) => r.task_id)).size).toBe(ids.length);
  expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
}, 120_000);

it('binds each Idempotency-Key to one task across a crash of the database', async () => {
  const load = startKeyedCreates(service.url, key, projectId, 20);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  await database.crash();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await database.start();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await load.stop();

  expect([...load.statuses.keys()].sort()).toEqual([201, 503]);
  const retried = await retryEveryKey(service.url, key, projectId, load.creates);
  const acknowledged = load.creates.filter((c) => c.acknowledged !== undefined);
  for (const create of acknowledged)
    expect([create.key, retried.get(create.key)]).toEqual([
      create.key,
      { taskId: create.acknowledged, replayed: true },
    ]);
  const stored = await taskIdsByTitle(
    service.knex,
    load.creates.map((c) => c.key),
  );
  expect(
    load.creates
      .filter((c) => stored.get(c.key)?.length !== 1)
      .map((c) => [c.key, stored.get(c.key)]),
  ).toEqual([]);
}, 120_000);

it('does not claim that nothing was written when the database is lost', async () => {
  await database.crash();
  try {
    const response = await fetch(`${service.url}/v1/tasks`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${key}`,
        'Content-Type': 'application/json',
        'Idempotency-Key': 'lost',
      },
      body: JSON.stringify({ project_id: projectId, title: 'lost' }),
    });
    const problem = (await response.json()) as { detail: string };
    expect(response.status).toBe(503);
    expect(problem.detail).toMatch(/may or may not have been made/);
    expect(problem.detail).toMatch(/same Idempotency-Key/);
  } finally {
    await database.start();
  }
}, 60_000);
