/**
 * On Linux the delivery thread runs at WEBHOOK_THREAD_NICE (-20 by default), ahead of the
 * requests' thread, which keeps the service's nice value; a service that may not raise a thread's
 * priority (no CAP_SYS_NICE) keeps the service's value for the thread too, says so, and delivers.
 */
import fs from 'node:fs';
import { seedTenant } from '../support/keyed-creates';
import { killHard, serveProcess, type ServiceProcess } from '../support/service-process';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';

let database: TestDatabase;
let key: string;
let projectId: string;
let receiver: WebhookReceiver;
let service: ServiceProcess | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ key, projectId } = await seedTenant(database.config));
  receiver = await startReceiver();
});
afterEach(async () => {
  if (service) await killHard(service.child);
  service = undefined;
});
afterAll(async () => {
  await Promise.all([receiver.stop(), database.drop()]);
});

/** Each thread's nice value, by thread id (the main thread's id is the process's). */
function niceByThread(pid: number): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // Nice is the line's 19th field: the 17th after the command's closing parenthesis.
      nices.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return nices;
}

const post = (path: string, body: unknown) =>
  fetch(service!.url + path, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

/** Registers an endpoint at the receiver (the delivery thread starts once one is enabled), then a task whose event it is sent. */
async function registerAndDeliver(path: string): Promise<void> {
  const endpoint = await post('/v1/webhook-endpoints', {
    url: `${receiver.origin}${path}`,
    event_types: ['task.created'],
  });
  expect(endpoint.status).toBe(201);
  const task = await post('/v1/tasks', { project_id: projectId, title: path });
  expect(task.status).toBe(201);
  await receiver.waitFor(1, { path, timeoutMs: 20_000 });
}

const env = { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', LOG_LEVEL: 'info' };

it('runs the delivery thread, and only it, at nice -20 while the requests keep 0', async () => {
  service = await serveProcess(database.config, env);
  const pid = service.child.pid!;
  const before = niceByThread(pid);
  await registerAndDeliver('/raised');
  const raised = [...niceByThread(pid)].filter(([, nice]) => nice === -20);
  expect(raised).toHaveLength(1);
  expect(before.has(raised[0][0])).toBe(false);
  expect(niceByThread(pid).get(pid)).toBe(0);
  expect(service.lines.filter((line) => /nice value/.test(line.msg))).toEqual([]);
});

it("keeps the service's nice value where raising it is not allowed, says so, and delivers", async () => {
  service = await serveProcess(database.config, env, ['setpriv', '--bounding-set=-sys_nice']);
  await registerAndDeliver('/kept');
  expect([...new Set(niceByThread(service.child.pid!).values())]).toEqual([0]);
  // The thread sends its log lines to the main thread in batches: the line may follow the delivery.
  const said = () => service!.lines.filter((line) => /nice value/.test(line.msg));
  for (let waited = 0; said().length === 0 && waited < 10_000; waited += 20)
    await new Promise((resolve) => setTimeout(resolve, 20));
  expect(said()).toEqual([
    expect.objectContaining({
      level: 30,
      nice: -20,
      msg: "the webhook thread keeps the service's nice value: raising its priority needs CAP_SYS_NICE or RLIMIT_NICE",
    }),
  ]);
});
