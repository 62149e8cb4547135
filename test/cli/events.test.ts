/**
 * `npm run -s events -- listen --forward-to URL` against the real service: every event of 50
 * changes reaches a local receiver once and in order, signed so that `standardwebhooks` verifies
 * it with the secret the listener printed; killed with SIGKILL and started again, it resumes after
 * the last event it forwarded, with the same secret. A receiver that refuses or is down gets
 * each event again, with the line saying it waits, and no later event before it; a listener
 * stopped before its first event resumes from where it started; a state file it cannot read
 * stops it with a message naming the file. `trigger TYPE` makes a change of that type and says
 * which events it made. Both take the event types the document lists. `receive` refuses a
 * secret that is none (README's first webhook runs it: test/cli/first-webhook.test.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { Webhook } from 'standardwebhooks';
import { loadDocument } from '../../src/http/document';
import { projectRoot } from '../../src/paths';
import { startTestService, type TestService } from '../support/test-service';
import { freePort } from '../support/free-port';
import { runCli as runCompiledCli } from '../support/run-cli';
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
  { target = `${receiver.origin}/hook`, environment = env() } = {},
): Promise<{ child: ChildProcess; secret: string; lines: string[] }> {
  const child = spawn(process.execPath, [entryPoint, 'listen', '--forward-to', target, ...extra], {
    env: environment,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
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

const runCli = (args: string[], environment: NodeJS.ProcessEnv) =>
  runCompiledCli(entryPoint, args, environment);

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

/**
 * The service behind a proxy that holds each read of the feed's head (`from=latest`) for
 * `delayMs` before passing it on: a listener on a busy machine, whose first read comes late.
 */
async function slowHeadProxy(delayMs: number): Promise<{ url: string; stop(): Promise<void> }> {
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.url!.includes('from=latest'))
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string' && !['host', 'connection'].includes(name))
        headers.set(name, value);
    try {
      const answer = await fetch(api.baseUrl + req.url, {
        method: req.method,
        headers,
        body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
      });
      const body = Buffer.from(await answer.arrayBuffer());
      const passed: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (!['content-length', 'content-encoding', 'connection'].includes(name))
          passed[name] = value;
      });
      res.writeHead(answer.status, passed).end(body);
    } catch {
      res.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

it("says it forwards from now on only once it has read the feed's head: a change made right after is forwarded", async () => {
  const delayMs = 1500;
  const proxy = await slowHeadProxy(delayMs);
  const hook = '/hook-now-on';
  const environment = {
    ...env(),
    TASK_TRACKER_URL: proxy.url,
    TASK_TRACKER_LISTEN_STATE: path.join(folder, 'now-on.json'),
  };
  const started = Date.now();
  const listener = await listen([], { target: `${receiver.origin}${hook}`, environment });
  try {
    expect(listener.lines[0]).toMatch(/, from now on\.$/);
    // Said once the head was read, past the proxy's hold.
    expect(Date.now() - started).toBeGreaterThanOrEqual(delayMs);
    await api.client(key).POST('/v1/projects', { body: { name: 'right after' } });
    const [delivery] = await receiver.waitFor(1, { path: hook, timeoutMs: 10_000 });
    expect(JSON.parse(delivery.body)).toMatchObject({
      type: 'project.created',
      data: { object: { name: 'right after' } },
    });
  } finally {
    await kill(listener.child, 'SIGTERM');
    await proxy.stop();
  }
}, 30_000);

it.each(['project.updated', 'task.updated', 'task.deleted'])(
  'trigger %s makes a change of that type and names each event it made',
  async (type) => {
    const ofType = async () => {
      const { data, error } = await api
        .client(key)
        .GET('/v1/events', { params: { query: { limit: 200, type: [type as 'task.updated'] } } });
      expect(error).toBeUndefined();
      return data!.data;
    };
    const before = (await ofType()).length;
    const run = await runCli(['trigger', type], env());
    expect(run.status).toBe(0);
    // The feed shows an event once it is numbered, a moment after its change commits.
    let events = await ofType();
    for (const deadline = Date.now() + 5000; events.length === before && Date.now() < deadline;)
      events = await new Promise((resolve) => setTimeout(resolve, 50)).then(ofType);
    const object = events[events.length - 1].data.object as {
      task_id?: string;
      project_id: string;
    };
    const project = `project ${object.project_id}`;
    const task = `task ${object.task_id}`;
    const made = (event: string, what: string) => `made ${event.padEnd(15)}  ${what}`;
    expect(run.stdout.trim().split('\n')).toEqual(
      type.startsWith('task')
        ? [made('project.created', project), made('task.created', task), made(type, task)]
        : [made('project.created', project), made(type, project)],
    );
  },
);

it("takes the document's event types, read from it, for --types", async () => {
  const documented = (
    loadDocument().definition.components!.schemas!.EventType as { enum: string[] }
  ).enum;
  const run = await runCli(
    ['listen', '--forward-to', 'http://127.0.0.1:1/', '--types', 'x.y'],
    env(),
  );
  expect(run.status).toBe(2);
  expect(run.stderr).toContain(`--types takes ${documented.join(', ')}, not x.y`);
});

/** Waits until `check` holds, polling; fails after `timeoutMs`. */
async function until(check: () => boolean, what: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it('stopped before its first event and started again with its receiver down, forwards every event in order once the receiver answers', async () => {
  const port = await freePort();
  const target = `http://127.0.0.1:${port}/hook`;
  const environment = { ...env(), TASK_TRACKER_LISTEN_STATE: path.join(folder, 'down.json') };
  const client = api.client(key);
  const { data: project } = await client.POST('/v1/projects', { body: { name: 'down' } });
  const stateFile = () =>
    fs.existsSync(environment.TASK_TRACKER_LISTEN_STATE)
      ? (JSON.parse(fs.readFileSync(environment.TASK_TRACKER_LISTEN_STATE, 'utf8')) as {
          cursors: Record<string, string>;
        })
      : undefined;
  // From now on, with nothing to forward: its position is stored at start.
  const first = await listen(['--types', 'task.created'], { target, environment });
  await until(() => Object.keys(stateFile()?.cursors ?? {}).length === 1, 'the stored position');
  await kill(first.child, 'SIGKILL');
  const made: string[] = [];
  const create = async (title: string) => {
    const { data } = await client.POST('/v1/tasks', {
      body: { project_id: project!.project_id, title },
    });
    made.push(data!.task_id);
  };
  for (let i = 0; i < 3; i++) await create(`while stopped ${i}`);
  // Nothing listens on the target: each forward fails, and the listener waits.
  const second = await listen(['--types', 'task.created'], { target, environment });
  try {
    await until(
      () =>
        second.lines.filter((line) => /ECONNREFUSED.*not taken: waiting/.test(line)).length >= 2,
      'two refused forwards',
    );
    for (let i = 0; i < 2; i++) await create(`while down ${i}`);
    // The receiver comes up refusing with 500 for a while, then takes everything.
    let refusals = 0;
    const late = await startReceiver(
      () => (refusals++ < 2 ? { status: 500 } : { status: 204 }),
      port,
    );
    try {
      const taken = () => late.received.slice(2);
      await until(() => taken().length >= 5, 'five events taken', 60_000);
      const ids = taken().map(
        (delivery) =>
          (JSON.parse(delivery.body) as { data: { object: { task_id: string } } }).data.object
            .task_id,
      );
      expect(ids).toEqual(made);
      // Each refused one was the first event, sent again: nothing later went before it.
      expect(
        new Set(late.received.slice(0, 3).map((delivery) => delivery.headers['webhook-id'])).size,
      ).toBe(1);
      expect(
        second.lines.some((line) =>
          /#\d+\s+500 .*not taken: waiting [\d.]+ s, then sending #\d+ again/.test(line),
        ),
      ).toBe(true);
      await until(
        () =>
          second.lines.filter((line) => /task\.created\s+#\d+\s+204\s+\d+ ms$/.test(line))
            .length === 5,
        'five lines of 204',
      );
    } finally {
      await late.stop();
    }
  } finally {
    await kill(second.child, 'SIGTERM');
  }
}, 120_000);

it('stops with a message naming a state file it cannot read, and leaves the file as it was', async () => {
  const file = path.join(folder, 'corrupt.json');
  fs.writeFileSync(file, '{"secret": "whsec_abc", "cursors": {');
  const run = await runCli(['listen', '--forward-to', `${receiver.origin}/hook`], {
    ...env(),
    TASK_TRACKER_LISTEN_STATE: file,
  });
  expect(run.status).toBe(1);
  expect(run.stderr.trim()).toBe(
    `the listener's state file ${file} is not one it wrote (it holds the signing secret and the positions): fix it, or move it away to start with a new secret`,
  );
  expect(fs.readFileSync(file, 'utf8')).toBe('{"secret": "whsec_abc", "cursors": {');
  const unreadable = await runCli(['listen', '--forward-to', `${receiver.origin}/hook`], {
    ...env(),
    TASK_TRACKER_LISTEN_STATE: folder,
  });
  expect(unreadable.status).toBe(1);
  expect(unreadable.stderr.trim()).toMatch(
    new RegExp(`^cannot read the listener's state file ${folder}: EISDIR`),
  );
});

it('says how to use it when a key or a target is missing', async () => {
  const run = await runCli(['listen'], { ...env(), TASK_TRACKER_API_KEY: '' });
  expect(run.status).toBe(2);
  expect(run.stderr).toMatch(/^listen needs --forward-to/);
});

it('receive refuses a secret that is none, saying a "null" one means a refused registration, and a bad port', async () => {
  for (const secret of [[], ['--secret', 'null'], ['--secret', '']]) {
    const run = await runCli(['receive', ...secret], env());
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(
      /^receive needs --secret whsec_…, .*"null" means the registration was refused/,
    );
  }
  const port = await runCli(['receive', '--port', 'http', '--secret', 'x'], env());
  expect([port.status, port.stderr.split('\n')[0]]).toEqual([
    2,
    '--port takes a port number, not http',
  ]);
});
