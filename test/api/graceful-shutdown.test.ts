/**
 * SIGTERM under load, on the real `npm start` entry point: every request the service received
 * before the signal is answered with success, the process exits 0 in time, and what it
 * acknowledged is there afterwards.
 */
import { startService } from '../../src/server';
import { seedTenant } from '../support/keyed-creates';
import { serveProcess } from '../support/service-process';
import { testConfig } from '../support/test-config';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let database: TestDatabase;
let key: string;
let projectId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ key, projectId } = await seedTenant(database.config));
});
afterAll(() => database.drop());

it('answers every request it received before SIGTERM with success, then exits 0', async () => {
  const { child, url, lines } = await serveProcess(database.config, {
    LOG_LEVEL: 'debug',
    SHUTDOWN_GRACE_SECONDS: '10',
  });
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.once('exit', (code) => resolve({ code, at: Date.now() })),
  );
  const answers: Array<{ status: number; taskId?: string }> = [];
  let signalledAt = 0;

  // Sixteen clients create tasks back to back until the service stops taking connections (with
  // no rate limit: at full speed they would exceed the default one).
  const client = async () => {
    for (;;) {
      let res: Response;
      try {
        res = await fetch(`${url}/v1/tasks`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ project_id: projectId, title: 'under load' }),
        });
      } catch {
        if (signalledAt !== 0) return; // refused or reset after the signal: never received
        throw new Error('a request failed before the signal');
      }
      answers.push({
        status: res.status,
        taskId: ((await res.json()) as { task_id?: string }).task_id,
      });
    }
  };
  const clients = Array.from({ length: 16 }, client);
  // The signal comes once the load is well under way, however busy the machine.
  const deadline = Date.now() + 15_000;
  while (answers.length <= 50 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  signalledAt = Date.now();
  child.kill('SIGTERM');
  await Promise.all(clients);
  const { code, at } = await exited;

  expect(code).toBe(0);
  expect(at - signalledAt).toBeLessThan(10000);
  expect(answers.length).toBeGreaterThan(50);
  expect(answers.filter((a) => a.status !== 201)).toEqual([]);

  // The service's own account: each request it received got its answer, a success.
  const received = lines.filter((l) => l.msg === 'request received').map((l) => l.request_id);
  const answered = new Map(
    lines.filter((l) => typeof l.status === 'number').map((l) => [l.request_id, l.status]),
  );
  expect(received.filter((id) => answered.get(id) !== 201)).toEqual([]);
  expect(received).toHaveLength(answers.length);

  // Every acknowledged task is stored.
  const after = await startService(testConfig(database.config));
  try {
    const stored = await after
      .knex('tasks')
      .whereIn(
        'task_id',
        answers.map((a) => a.taskId!),
      )
      .count({ n: '*' });
    expect(Number(stored[0].n)).toBe(answers.length);
  } finally {
    await after.stop();
  }
});
