/**
 * Issue 47, item 5: each long-running entry point, started as a user starts it (`npm start`,
 * `npm run sandbox`, `npm run mock`, `npm run events -- listen`, `make run`, `make sandbox`,
 * `make mock`), ends with every process it started when its outermost process alone gets SIGTERM,
 * or (npm's) SIGINT: within a bounded time no process of its tree is left (nor any other carrying
 * the test's mark in its environment), and the sandbox has removed its database. npm killed outright takes the mock, and its Prisms, with it.
 *
 * GNU make holds a SIGINT sent to make alone until its recipe ends (it counts on the terminal's
 * Ctrl-C reaching the recipe too): make gets SIGINT as Ctrl-C sends it, to the whole group, where
 * the command also gets the second SIGINT npm passes on.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../src/paths';
import { supportedVersions } from '../../src/versions/versions';
import { freePort } from '../support/free-port';
import { isAlive, processTree, processesWithVariable } from '../support/process-tree';
import { startTestService, type TestService } from '../support/test-service';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/** Carried, with a value of each test's own, in the environment of every process a test starts. */
const mark = 'TT_PROCESS_TREE_TEST';
/** The install step taken as done: the test runs in an installed clone, and the recipe is the user's. */
const make = ['make', '-o', 'node_modules/.installed'];
const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-process-tree-'));
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

interface EntryPoint {
  command: string[];
  env: Record<string, string | undefined>;
  /** What it prints once it serves; its first group, when there is one, is the URL it serves on. */
  serving: RegExp;
  /** Its Node entry point, which must be in the tree. */
  script: string;
  /** The Prism processes it runs. */
  prisms: number;
  /** Resolves once it does its work (answers, or forwards an event). */
  working(url: string | undefined): Promise<void>;
  /** Checks, once it ended, that it stopped as it does on a signal (not killed by a second one). */
  stoppedCleanly?(): void;
}

const servedUrl = /(http:\/\/127\.0\.0\.1:\d+)\/v1/;

async function answersHealthz(url: string | undefined): Promise<void> {
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
}

const service = (command: string[]) => (): EntryPoint => ({
  command,
  env: { PORT: '0', DATABASE_URL: `sqlite:${fs.mkdtempSync(path.join(folder, 'db-'))}/t.sqlite` },
  serving: servedUrl,
  script: 'dist/src/cli/serve.js',
  prisms: 0,
  working: answersHealthz,
});

const sandbox = (command: string[]) => (): EntryPoint => {
  // Where it makes its database (os.tmpdir()), which it removes when it stops.
  const temporary = fs.mkdtempSync(path.join(folder, 'tmp-'));
  const databases = () =>
    fs.readdirSync(temporary).filter((name) => name.startsWith('task-tracker-sandbox-'));
  return {
    command,
    // It refuses to start with DATABASE_URL set.
    env: { PORT: '0', DATABASE_URL: undefined, TMPDIR: temporary },
    serving: servedUrl,
    script: 'dist/src/cli/sandbox.js',
    prisms: 0,
    working: async (url) => {
      expect(databases()).toHaveLength(1);
      await answersHealthz(url);
    },
    stoppedCleanly: () => expect(databases()).toEqual([]),
  };
};

const mock = (command: (port: number) => string[]) => async (): Promise<EntryPoint> => ({
  command: command(await freePort()),
  env: {},
  serving: servedUrl,
  script: 'dist/src/cli/mock.js',
  prisms: supportedVersions.length,
  // Each version's Prism answers through it (503 while one is starting).
  working: async (url) => {
    for (const version of supportedVersions)
      await eventually(`the mock answers for ${version}`, 90_000, async () => {
        const answer = await fetch(`${url}/v1/tasks/0193a5b3-1d20-7e55-8c3f-6a7b8c9d0e12`, {
          headers: { Authorization: 'Bearer any', 'Api-Version': version },
        });
        return answer.status !== 503;
      });
  },
});

const listener = (): EntryPoint => {
  const hook = `/hook-${randomUUID()}`;
  return {
    command: ['npm', 'run', 'events', '--', 'listen', '--forward-to', receiver.origin + hook],
    env: {
      TASK_TRACKER_URL: api.baseUrl,
      TASK_TRACKER_API_KEY: key,
      TASK_TRACKER_LISTEN_STATE: path.join(folder, `${randomUUID()}.json`),
    },
    serving: /from now on\.\nSigned with whsec_/,
    script: 'dist/src/cli/events.js',
    prisms: 0,
    // It forwards: a change reaches the receiver. The listener says it forwards "from now on" only
    // once it has read the feed's head, so the one change made as soon as it said so arrives.
    working: async () => {
      await api.client(key).POST('/v1/projects', { body: { name: 'forwarded' } });
      await receiver.waitFor(1, { path: hook, timeoutMs: 30_000 });
    },
  };
};

/** Resolves once `check` holds, trying every 200 ms; fails after `timeoutMs` naming `what`. */
async function eventually(
  what: string | (() => string),
  timeoutMs: number,
  check: () => boolean | Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await Promise.resolve(check()).catch(() => false)) return;
    if (Date.now() > deadline)
      throw new Error(
        `not within ${timeoutMs / 1000} s: ${typeof what === 'string' ? what : what()}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

interface Stop {
  signal: NodeJS.Signals;
  /** To the whole process group, as a terminal's Ctrl-C; otherwise to the outermost process alone. */
  group?: boolean;
}

/** Starts the entry point as a user does, signals it once it works, and checks that all of it ended. */
async function endsWithEveryChild(
  makeEntryPoint: () => EntryPoint | Promise<EntryPoint>,
  stop: Stop,
): Promise<void> {
  const entry = await makeEntryPoint();
  const value = randomUUID();
  const env: NodeJS.ProcessEnv = { ...process.env, [mark]: value };
  // Under `make test`, make's own variables would make this make a sub-make of that one.
  for (const name of ['MAKEFLAGS', 'MFLAGS', 'MAKELEVEL']) delete env[name];
  for (const [name, setting] of Object.entries(entry.env))
    if (setting === undefined) delete env[name];
    else env[name] = setting;
  const [command, ...args] = entry.command;
  // detached: a process group of its own, for Ctrl-C's signal and a cleanup that reaches it all.
  const outer = spawn(command, args, { cwd: projectRoot, env, detached: true });
  try {
    let output = '';
    outer.stdout.on('data', (chunk) => (output += chunk));
    outer.stderr.on('data', (chunk) => (output += chunk));
    await eventually(
      () => `${entry.command.join(' ')} serves; it printed:\n${output}`,
      90_000,
      () => entry.serving.test(output),
    );
    const url = entry.serving.exec(output)![1];
    await entry.working(url);

    const tree = processTree(outer.pid!);
    expect(tree.some((member) => member.command.includes(entry.script))).toBe(true);
    expect(tree.filter((member) => member.command.includes('.bin/prism'))).toHaveLength(
      entry.prisms,
    );
    process.kill(stop.group ? -outer.pid! : outer.pid!, stop.signal);

    const left = () => [
      ...tree.filter(isAlive),
      ...processesWithVariable(mark, value).filter(
        (found) => !tree.some((member) => member.pid === found.pid),
      ),
    ];
    await eventually('every process of the tree ends', 30_000, () => left().length === 0).catch(
      () => expect(left().map(({ pid, command }) => `${pid} ${command}`)).toEqual([]),
    );
    // Whether its port still answers is not asked: with no process of the tree left nothing of
    // it listens, and a port freed may be taken at once by another test's server (as in CI).
    entry.stoppedCleanly?.();
  } finally {
    // Whatever failed: nothing this test started outlives it (its group, or its mark).
    try {
      process.kill(-outer.pid!, 'SIGKILL');
    } catch {
      // The group has ended.
    }
    for (const left of processesWithVariable(mark, value)) process.kill(left.pid, 'SIGKILL');
  }
}

const npmStart = service(['npm', 'start']);
const npmSandbox = sandbox(['npm', 'run', 'sandbox']);
const npmMock = mock((port) => ['npm', 'run', 'mock', '--', '--port', String(port)]);
const makeSandbox = sandbox([...make, 'sandbox']);

// One at a time: together they started up to five npm, node and Prism trees at once, which in
// CI took the cores from the other lane's tests (a MariaDB pool timed out at a service's start).
it.each([
  ['npm start', npmStart],
  ['npm run sandbox', npmSandbox],
  ['npm run mock', npmMock],
  ['npm run events -- listen', listener],
  ['make run', service([...make, 'run'])],
  ['make sandbox', makeSandbox],
  ['make mock', mock((port) => [...make, 'mock', `MOCK_PORT=${port}`])],
])(
  '%s: SIGTERM to the outermost process ends every process it started',
  (_name, entry) => endsWithEveryChild(entry, { signal: 'SIGTERM' }),
  180_000,
);

// npm passes SIGINT on as it passes SIGTERM: one entry point is enough to hold it, the issue's own.
it.each([['npm run events -- listen', listener]])(
  '%s: SIGINT to npm ends every process it started',
  (_name, entry) => endsWithEveryChild(entry, { signal: 'SIGINT' }),
  180_000,
);

it(
  'make sandbox: Ctrl-C (SIGINT to the group; npm passes a second one on) ends every process it started',
  () => endsWithEveryChild(makeSandbox, { signal: 'SIGINT', group: true }),
  180_000,
);

it(
  'npm run mock: npm killed outright (SIGKILL) takes the mock, and its Prisms, with it',
  () => endsWithEveryChild(npmMock, { signal: 'SIGKILL' }),
  180_000,
);
