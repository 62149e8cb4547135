/**
 * `npm run -s events -- listen --forward-to URL` against the real service: every event of 50
 * changes reaches a local receiver once and in order, signed so that `standardwebhooks` verifies
 * it with the secret the listener printed; killed with SIGKILL and started again, it resumes after
 * the last event it forwarded, with the same secret. `trigger TYPE` makes a change of that type.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { Webhook } from 'standardwebhooks';
import { projectRoot } from '../../src/paths';
import { startTestService, type TestService } from '../support/test-service';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';

const entryPoint = path.join(projectRoot, 'dist', 'src', 'cli', 'events.js');
const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-events-cli-'));
let api: TestService;
let receiver: WebhookReceiver;
let key: string;

beforeAll(async () => {
  api = await startTestService();
  receiver = await startReceiver();
  key = await api.createKey('listener');
});
afterAll(async () => {
  await api.stop();
  await receiver.stop();
  fs.rmSync(folder, { recursive: true, force: true });
});

const env = () => ({
  ...process.env,
  TASK_TRACKER_URL: api.baseUrl,
  TASK_TRACKER_API_KEY: key,
  TASK_TRACKER_LISTEN_STATE: path.join(folder, 'listen.json'),
});

/** Starts a listener; resolves with it and the secret it printed. */
async function listen(
  extra: string[] = [],
): Promise<{ child: ChildProcess; secret: string; lines: string[] }> {
  const child = spawn(
    process.execPath,
    [entryPoint, 'listen', '--forward-to', `${receiver.origin}/hook`, ...extra],
    { env: env(), stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines: string[] = [];
  const secret = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      const signed = /Signed with (whsec_\S+)/.exec(line);
      if (signed) resolve(signed[1]);
    });
    child.once('exit', (code) => reject(new Error(`listen exited with ${code}`)));
  });
  return { child, secret, lines };
}

/** Runs the CLI to its end without blocking this process, which serves the API it calls. */
const runCli = (args: string[], environment: NodeJS.ProcessEnv) =>
  promisify(execFile)(process.execPath, [entryPoint, ...args], {
    env: environment,
    encoding: 'utf8',
  }).then(
    ({ stdout, stderr }) => ({ status: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      status: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );

const kill = (child: ChildProcess, signal: NodeJS.Signals) =>
  new Promise((resolve) => {
    child.once('exit', resolve);
    child.kill(signal);
  });

it('forwards every event once, in order, verifiable with the printed secret, and resumes after SIGKILL', async () => {
  const client = api.client(key);
  const { data: project } = await client.POST('/v1/projects', { body: { name: 'listened' } });
  const first = await listen(['--from', 'oldest']);
  for (let i = 0; i < 24; i++)
    await client.POST('/v1/tasks', { body: { project_id: project!.project_id, title: `t${i}` } });
  await receiver.waitFor(25, { timeoutMs: 20_000 });
  // Let it store the cursor after the last one, as it does right after each answer.
  await new Promise((resolve) => setTimeout(resolve, 500));
  await kill(first.child, 'SIGKILL');
  for (let i = 24; i < 49; i++)
    await client.POST('/v1/tasks', { body: { project_id: project!.project_id, title: `t${i}` } });
  const second = await listen();
  try {
    expect(second.secret).toBe(first.secret);
    const received = await receiver.waitFor(50, { timeoutMs: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received).toHaveLength(50);
    const verifier = new Webhook(first.secret);
    const events = received.map(
      (delivery) =>
        verifier.verify(delivery.body, delivery.headers as Record<string, string>) as {
          sequence: number;
          event_id: string;
        },
    );
    expect(events.map((event) => event.sequence)).toEqual(
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    expect(received.map((delivery) => delivery.headers['webhook-id'])).toEqual(
      events.map((event) => event.event_id),
    );
    expect(second.lines.some((line) => /task\.created\s+#50\s+204/.test(line))).toBe(true);
  } finally {
    await kill(second.child, 'SIGTERM');
  }
}, 60_000);

it.each(['project.updated', 'task.updated', 'task.deleted'])(
  'trigger %s makes a change of that type',
  async (type) => {
    const run = await runCli(['trigger', type], env());
    expect(run.status).toBe(0);
    const { data } = await api
      .client(key)
      .GET('/v1/events', { params: { query: { limit: 200, type: [type as 'task.updated'] } } });
    const object = data!.data[data!.data.length - 1].data.object as {
      task_id?: string;
      project_id: string;
    };
    expect(run.stdout.trim()).toBe(
      `${type}: ${type.startsWith('task') ? `task ${object.task_id}` : `project ${object.project_id}`}`,
    );
  },
);

it('says how to use it when a key or a target is missing', async () => {
  const run = await runCli(['listen'], { ...env(), TASK_TRACKER_API_KEY: '' });
  expect(run.status).toBe(2);
  expect(run.stderr).toMatch(/^listen needs --forward-to/);
});
