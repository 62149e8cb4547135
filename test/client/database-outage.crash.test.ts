/**
 * The client kit through a database outage: MariaDB killed, a create and a read started while it
 * is down, MariaDB started again. The service answers 503 meanwhile; the client waits and retries,
 * and each call succeeds once the database is back, the create made exactly once.
 */
import { createClient, type TaskTrackerClient } from '../../clients/typescript/src';
import { issueApiKey } from '../../src/cli/issue-api-key';
import { createRepositories } from '../../src/all-repositories';
import { startService, type RunningService } from '../../src/server';
import { OwnMariaDb } from '../support/own-mariadb';
import { testConfig } from '../support/test-config';

let database: OwnMariaDb;
let service: RunningService;
let client: TaskTrackerClient;

beforeAll(async () => {
  database = await OwnMariaDb.create();
  service = await startService(testConfig({ client: 'mysql', url: database.url }));
  const key = (await issueApiKey(createRepositories(service.knex), 'acme', ['read', 'write'])).key;
  client = createClient({
    baseUrl: service.url,
    apiKey: key,
    maxRetries: 12,
    retry: { baseDelayMs: 200, maxDelayMs: 1500 },
  });
}, 120_000);
afterAll(async () => {
  await service?.stop();
  await database?.destroy();
});

it('retries through 503s while the database is down, then succeeds, creating once', async () => {
  const project = await client.projects.create({ name: 'outage' });
  const answers: number[] = [];
  const counting = createClient({
    baseUrl: service.url,
    apiKey: (await issueApiKey(createRepositories(service.knex), 'acme', ['read', 'write'])).key,
    maxRetries: 12,
    retry: { baseDelayMs: 200, maxDelayMs: 1500 },
    fetch: async (request) => {
      const response = await fetch(request);
      answers.push(response.status);
      return response;
    },
  });
  await database.crash();
  const created = counting.tasks.create({
    project_id: project.project_id,
    title: 'made during the outage',
  });
  const read = counting.projects.get(project.project_id);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  await database.start();
  const task = await created;
  expect((await read).project_id).toBe(project.project_id);
  expect(answers).toContain(503);
  const tasks = await client.tasks.list(project.project_id).toArray({ max: 10 });
  expect(tasks.map((t) => t.task_id)).toEqual([task.task_id]);
}, 60_000);
