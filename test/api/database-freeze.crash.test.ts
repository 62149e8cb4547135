/**
 * MariaDB frozen (SIGSTOP) under load: every statement is bounded, so each request gets 503
 * within about ten seconds instead of hanging while the server is stopped, and the pool serves
 * again by itself once the server runs. The bound is 2 s here (DATABASE_STATEMENT_TIMEOUT_SECONDS,
 * 5 by default); a request may also wait up to 5 s for a pool connection.
 */
import { startService, type RunningService } from '../../src/server';
import { issueApiKey } from '../../src/cli/issue-api-key';
import { createRepositories } from '../../src/all-repositories';
import { OwnMariaDb } from '../support/own-mariadb';
import { testConfig } from '../support/test-config';

let database: OwnMariaDb;
let service: RunningService;
let key: string;
let projectId: string;

beforeAll(async () => {
  database = await OwnMariaDb.create();
  service = await startService(
    testConfig({ client: 'mysql', url: database.url }, { statementTimeoutSeconds: 2 }),
  );
  const repositories = createRepositories(service.knex);
  key = (await issueApiKey(repositories, 'acme', ['read', 'write'])).key;
  const tenant = await repositories.tenants.findOrCreate('acme');
  projectId = (
    await repositories.inTransaction('fixture', (write) =>
      repositories.projects.create(tenant.tenant_id, { name: 'freeze', description: '' }, write),
    )
  ).value.project_id;
}, 120_000);
afterAll(async () => {
  database?.thaw();
  await service?.stop();
  await database?.destroy();
});

/** A request's status (0: no answer within 20 s) and how long it took. */
async function timed(
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  try {
    const res = await fetch(`${service.url}${path}`, {
      ...init,
      headers: {
        Authorization: `Bearer ${key}`,
        'Content-Type': 'application/json',
        ...init.headers,
      },
      signal: AbortSignal.timeout(20_000),
    });
    await res.arrayBuffer();
    return { status: res.status, ms: Date.now() - started };
  } catch {
    return { status: 0, ms: Date.now() - started };
  }
}

const listTasks = () => timed(`/v1/projects/${projectId}/tasks`);
const createTask = () =>
  timed('/v1/tasks', {
    method: 'POST',
    body: JSON.stringify({ project_id: projectId, title: 'during the freeze' }),
  });

it('answers 503 within about ten seconds while the database is frozen, and recovers once it runs', async () => {
  // Every pool connection open and idle, as under load, when the server stops.
  expect((await Promise.all(Array.from({ length: 12 }, listTasks))).map((r) => r.status)).toEqual(
    Array(12).fill(200),
  );

  database.freeze();
  let frozen: Array<{ status: number; ms: number }>;
  try {
    // More requests than the pool has connections: some hold one, the rest wait for one.
    frozen = await Promise.all([
      ...Array.from({ length: 8 }, listTasks),
      ...Array.from({ length: 8 }, createTask),
      timed('/readyz'),
    ]);
  } finally {
    database.thaw();
  }
  expect(frozen.map((r) => r.status)).toEqual(Array(17).fill(503));
  expect(Math.max(...frozen.map((r) => r.ms))).toBeLessThan(10_000);

  const deadline = Date.now() + 15_000;
  let recovered = false;
  while (!recovered && Date.now() < deadline) {
    recovered = (await listTasks()).status === 200;
    if (!recovered) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  expect(recovered).toBe(true);
  expect((await Promise.all(Array.from({ length: 12 }, createTask))).map((r) => r.status)).toEqual(
    Array(12).fill(201),
  );
}, 120_000);
