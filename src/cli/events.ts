/**
 * `npm run -s events -- listen --forward-to URL` follows the event feed of the key's tenant and
 * POSTs each event to a local URL, signed as Standard Webhooks with a local secret, so a webhook
 * receiver on a laptop gets real events with no endpoint registered and nothing exposed.
 * `npm run -s events -- trigger TYPE` makes a change of that type, in a project of its own.
 * Both work against any instance: TASK_TRACKER_URL (default http://127.0.0.1:3000) and
 * TASK_TRACKER_API_KEY. `npm run -s events -- receive --secret whsec_…` is a webhook receiver on
 * this machine (the kit's webhookHandler), for a first webhook or for what `listen` forwards.
 *
 *   listen --forward-to URL [--types task.created,task.updated] [--from latest|oldest|CURSOR]
 *   trigger TYPE (an event type of a project or a task)
 *   receive --secret whsec_…[,whsec_…] [--port 4242] [--path /hook]
 *
 * The secret (printed at start) and the cursor of each URL and key are kept in a file under the
 * user's home (TASK_TRACKER_LISTEN_STATE names another), so a listener restarted signs with the
 * same secret and resumes after the last event its receiver took. The position is stored when
 * the listener starts and moves past an event only once the receiver answered it 2xx: a failed
 * forward is sent again, after a growing wait, until it is taken.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createClient, type EventType, type TaskTrackerClient } from '../../clients/typescript/src';
import http from 'node:http';
import { signTestWebhook, webhookHandler } from '../../clients/typescript/src/webhooks';
import { loadDocument } from '../http/document';
import { onStopSignal, stopWithParent } from './process-lifetime';

class UsageError extends Error {}
/** A state file that exists but cannot be used: replacing it would change the secret receivers check. */
class StateFileError extends Error {}

/** The event types the document lists, read from it so that a new one needs nothing here. */
const eventTypes = (
  loadDocument().definition.components!.schemas!.EventType as { enum: EventType[] }
).enum;
function usage(): string {
  return `usage: npm run -s events -- listen --forward-to URL [--types TYPE,...] [--from latest|oldest|CURSOR]
       npm run -s events -- trigger ${triggerable().join('|')}
         (both with TASK_TRACKER_API_KEY, and TASK_TRACKER_URL, default http://127.0.0.1:3000)
       npm run -s events -- receive --secret whsec_…[,whsec_…] [--port 4242] [--path /hook]`;
}

interface ListenState {
  secret: string;
  /** The cursor after the last event forwarded, by a hash of the service's URL, the key and the target. */
  cursors: Record<string, string>;
}

const statePath = () =>
  process.env.TASK_TRACKER_LISTEN_STATE ||
  path.join(os.homedir(), '.config', 'task-tracker', 'listen.json');

function readState(): ListenState {
  const file = statePath();
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new StateFileError(
        `cannot read the listener's state file ${file}: ${(error as Error).message}`,
      );
    const state = { secret: `whsec_${randomBytes(32).toString('base64')}`, cursors: {} };
    writeState(state);
    return state;
  }
  let state: Partial<ListenState> | null;
  try {
    state = JSON.parse(text) as Partial<ListenState> | null;
  } catch {
    state = null;
  }
  if (
    typeof state?.secret !== 'string' ||
    !state.secret.startsWith('whsec_') ||
    typeof state.cursors !== 'object' ||
    state.cursors === null
  )
    throw new StateFileError(
      `the listener's state file ${file} is not one it wrote (it holds the signing secret and the positions): fix it, or move it away to start with a new secret`,
    );
  return state as ListenState;
}

function writeState(state: ListenState): void {
  fs.mkdirSync(path.dirname(statePath()), { recursive: true });
  // Written whole and renamed, so a listener killed mid-write leaves the last state, not half of one.
  const temporary = `${statePath()}.${process.pid}`;
  fs.writeFileSync(temporary, JSON.stringify(state), { mode: 0o600 });
  fs.renameSync(temporary, statePath());
}

function connect(): { client: TaskTrackerClient; url: string; apiKey: string } {
  const apiKey = process.env.TASK_TRACKER_API_KEY;
  if (!apiKey) throw new UsageError('TASK_TRACKER_API_KEY is not set');
  const url = process.env.TASK_TRACKER_URL || 'http://127.0.0.1:3000';
  return { client: createClient({ baseUrl: url, apiKey }), url, apiKey };
}

function parseTypes(value: string | undefined): EventType[] | undefined {
  if (value === undefined) return undefined;
  const types = value.split(',').map((type) => type.trim());
  const unknown = types.filter((type) => !(eventTypes as string[]).includes(type));
  if (unknown.length > 0)
    throw new UsageError(`--types takes ${eventTypes.join(', ')}, not ${unknown.join(', ')}`);
  return types as EventType[];
}

/** Posts one signed event; whether the receiver took it (2xx), and its status or why there is none. */
async function forward(
  target: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ taken: boolean; outcome: string }> {
  try {
    const response = await fetch(target, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(10_000),
      redirect: 'manual',
    });
    await response.body?.cancel();
    return {
      taken: response.status >= 200 && response.status < 300,
      outcome: String(response.status),
    };
  } catch (error) {
    const cause =
      (error as Error).cause instanceof Error ? ((error as Error).cause as Error) : null;
    return { taken: false, outcome: `failed (${(cause ?? (error as Error)).message})` };
  }
}

/**
 * The wait before forwarding an event again after `failures` failed forwards: 0.5 s, doubling, at
 * most 5 s (the receiver is a local one, restarted by hand; a short cap takes it up soon).
 */
const forwardBackoffMs = (failures: number) => Math.min(5000, 500 * 2 ** (failures - 1));

/** Resolves after `ms`, or at once when `signal` aborts. */
const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });

async function listen(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      'forward-to': { type: 'string' },
      types: { type: 'string' },
      from: { type: 'string' },
    },
  });
  const target = values['forward-to'];
  if (!target || !/^https?:\/\//.test(target))
    throw new UsageError('listen needs --forward-to http://HOST:PORT/PATH');
  const types = parseTypes(values.types);
  const { client, url, apiKey } = connect();
  const state = readState();
  const place = createHash('sha256')
    .update(`${url}\n${apiKey}\n${target}`)
    .digest('base64url')
    .slice(0, 22);
  const from = values.from ?? state.cursors[place] ?? 'latest';
  const fromWhere =
    values.from ?? (state.cursors[place] ? 'where the last listener stopped' : 'now on');
  const stop = new AbortController();
  stopWithParent(onStopSignal(() => stop.abort()));
  const store = (cursor: string) => {
    state.cursors[place] = cursor;
    writeState(state);
  };
  // Once the feed has been read where the listener starts (for `latest`, its head), before any
  // event: the position is stored, so a listener stopped before one resumes here, and only then
  // does it say it forwards "from now on", so a change made once it said so is forwarded.
  const onStart = (cursor: string) => {
    store(cursor);
    console.log(
      `Forwarding ${types ? types.join(', ') : 'every event'} of ${url} to ${target}, from ${fromWhere}.`,
    );
    console.log(`Signed with ${state.secret} (the same on every start; kept in ${statePath()}).`);
  };
  const events = client.events.follow({ from, types, signal: stop.signal, onStart });
  for await (const event of events) {
    const { cursor, ...delivered } = event;
    for (let failures = 0; !stop.signal.aborted;) {
      // Signed again on each attempt: a fresh timestamp, the same webhook-id.
      const signed = signTestWebhook(delivered, state.secret);
      const started = performance.now();
      const { taken, outcome } = await forward(target, signed.body, {
        ...signed.headers,
        'user-agent': 'task-tracker-listen',
      });
      const line = `${new Date().toISOString()}  ${event.type.padEnd(15)}  #${event.sequence}  ${outcome}  ${Math.round(performance.now() - started)} ms`;
      if (taken) {
        console.log(line);
        break;
      }
      const waitMs = forwardBackoffMs(++failures);
      console.log(
        `${line}  not taken: waiting ${waitMs / 1000} s, then sending #${event.sequence} again (nothing later is sent before it)`,
      );
      await pause(waitMs, stop.signal);
    }
    if (stop.signal.aborted) break;
    store(cursor);
  }
}

/**
 * How `trigger` makes each change: a project of its own first, then what the type asks for. The
 * types it can make are the keys here (a compile error names one the document no longer has).
 */
const changeMakers = {
  'project.created': async () => {},
  'project.updated': async ({ client, project, made }) => {
    await client.projects.update(project, { description: 'Updated by events trigger' });
    made('project.updated', `project ${project}`);
  },
  'project.deleted': async ({ client, project, made }) => {
    await client.projects.delete(project);
    made('project.deleted', `project ${project}`);
  },
  'task.created': async ({ task }) => {
    await task();
  },
  'task.updated': async ({ client, task, made }) => {
    const id = await task();
    await client.tasks.update(id, { status: 'in_progress' });
    made('task.updated', `task ${id}`);
  },
  'task.deleted': async ({ client, task, made }) => {
    const id = await task();
    await client.tasks.delete(id);
    made('task.deleted', `task ${id}`);
  },
} satisfies Partial<Record<EventType, ChangeMaker>>;

type ChangeMaker = (made: {
  client: TaskTrackerClient;
  /** The project made for this change. */
  project: string;
  /** Makes a task in that project; its id. */
  task: () => Promise<string>;
  made: (event: EventType, what: string) => void;
}) => Promise<void>;

/** The document's event types that `trigger` can make, in the document's order. */
function triggerable(): EventType[] {
  return eventTypes.filter((type) => type in changeMakers);
}

/** Makes one change of `type` through the API, in a project of its own; prints each event it made. */
async function trigger(args: string[]): Promise<void> {
  const [type] = args;
  if (!(triggerable() as Array<string | undefined>).includes(type))
    throw new UsageError(`trigger takes one of ${triggerable().join(', ')}`);
  const { client } = connect();
  const made = (event: EventType, what: string) => console.log(`made ${event.padEnd(15)}  ${what}`);
  const project = (await client.projects.create({ name: 'Triggered by events trigger' }))
    .project_id;
  made('project.created', `project ${project}`);
  const task = async () => {
    const { task_id } = await client.tasks.create({ project_id: project, title: 'Triggered task' });
    made('task.created', `task ${task_id}`);
    return task_id;
  };
  await changeMakers[type as keyof typeof changeMakers]({ client, project, task, made });
}

/**
 * A webhook receiver on 127.0.0.1 (the kit's webhookHandler): one line for each delivery it
 * verified and for each it refused, with why. It ends on SIGINT or SIGTERM.
 */
async function receive(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { secret: { type: 'string' }, port: { type: 'string' }, path: { type: 'string' } },
  });
  const port = Number(values.port ?? 4242);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new UsageError(`--port takes a port number, not ${values.port}`);
  const at = () => new Date().toISOString();
  let handler: http.RequestListener;
  try {
    handler = webhookHandler({
      secret: (values.secret ?? '').split(','),
      path: values.path,
      onEvent: (event) => {
        const subject = event.type.startsWith('task.')
          ? `task ${(event.data.object as { task_id: string }).task_id}`
          : `project ${event.project_id}`;
        console.log(`${at()}  ${event.type.padEnd(15)}  #${event.sequence}  verified  ${subject}`);
      },
      onRefusal: ({ status, reason }) =>
        console.log(`${at()}  refused, answered ${status}: ${reason}`),
    });
  } catch {
    // Not echoed: a secret does not belong on a terminal that may be shared or recorded.
    throw new UsageError(
      'receive needs --secret whsec_…, the secret the endpoint\'s registration answered (or the one listen prints); an empty one or "null" means the registration was refused: its answer says why',
    );
  }
  const server = http.createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  console.log(
    `Receiving webhooks on http://127.0.0.1:${port}${values.path ?? '/'}, each verified with the secret; SIGINT (Ctrl-C) or SIGTERM stops it.`,
  );
  await new Promise<void>((resolve) =>
    stopWithParent(
      onStopSignal(() => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
    ),
  );
}

async function main(): Promise<void> {
  const [command, ...args] = process.argv.slice(2);
  if (command === 'listen') return listen(args);
  if (command === 'trigger') return trigger(args);
  if (command === 'receive') return receive(args);
  throw new UsageError(command ? `unknown command ${command}` : 'a command is needed');
}

// Exits as soon as the work is done: fetch's kept-alive connections would hold the process a few seconds more.
main().then(
  () => process.exit(0),
  (error) => {
    if (error instanceof UsageError) console.error(`${error.message}\n${usage()}`);
    else console.error(error instanceof Error ? error.message : error);
    process.exit(error instanceof UsageError ? 2 : 1);
  },
);
