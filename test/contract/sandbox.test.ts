/**
 * `make sandbox-proxy` as a mock consumer uses it: the sandbox behind Prism's validating proxy.
 * The flows a mock cannot serve (read-after-write, paging to the end, 404 after a delete, 412 on
 * a stale If-Match, an idempotent replay, a long poll) all pass through the proxy with no
 * violation of the document, and the same flows sent to the plain mock show which it fails.
 * The sandbox refuses a MySQL DATABASE_URL and leaves no file behind.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { projectRoot } from '../../src/paths';
import { freePort } from '../support/free-port';
import { startPrism, type RunningPrism } from '../support/prism';

const entryPoint = path.join(projectRoot, 'dist', 'src', 'cli', 'sandbox.js');
const sandboxFolders = () =>
  fs.readdirSync(os.tmpdir()).filter((name) => name.startsWith('task-tracker-sandbox-'));

let sandbox: ChildProcess;
let proxyUrl: string;
let writeKey: string;
let mock: RunningPrism;
const violations: string[] = [];
let foldersBefore: string[];

beforeAll(async () => {
  foldersBefore = sandboxFolders();
  const proxyPort = await freePort();
  sandbox = spawn(process.execPath, [entryPoint, '--proxy', '--proxy-port', String(proxyPort)], {
    env: { ...process.env, PORT: String(await freePort()), LOG_LEVEL: 'silent', DATABASE_URL: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  writeKey = await new Promise<string>((resolve, reject) => {
    const lines = readline.createInterface({ input: sandbox.stdout! });
    let tenant = '';
    lines.on('line', (line) => {
      if (line.trim().startsWith('Tenant ')) tenant = line.trim().slice('Tenant '.length);
      const key = /write key\s+(tt_\S+)/.exec(line);
      if (key && tenant === 'demo-acme') resolve(key[1]);
    });
    sandbox.once('exit', (code) => reject(new Error(`the sandbox exited with ${code}`)));
  });
  proxyUrl = `http://127.0.0.1:${proxyPort}`;
  for (
    const deadline = Date.now() + 30_000;
    !(await fetch(`${proxyUrl}/healthz`).then(
      () => true,
      () => false,
    ));
  ) {
    if (Date.now() > deadline) throw new Error('the proxy did not answer');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  mock = await startPrism({ mock: 'static' });
}, 90_000);
afterAll(async () => {
  await mock?.stop();
  if (sandbox && sandbox.exitCode === null) {
    const exited = new Promise((resolve) => sandbox.once('exit', resolve));
    sandbox.kill('SIGINT');
    await exited;
  }
});

type Call = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<{ status: number; headers: Headers; json: any }>;
const caller =
  (base: string): Call =>
  async (method, path, body, headers = {}) => {
    const response = await fetch(base + path, {
      method,
      headers: {
        Authorization: `Bearer ${writeKey}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const found = response.headers.get('sl-violations');
    if (found) violations.push(`${method} ${path}: ${found}`);
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      json: text ? JSON.parse(text) : undefined,
    };
  };

/** Each flow answers whether the server did what the service promises. */
const flows: Record<string, (call: Call) => Promise<boolean>> = {
  'read after write': async (call) => {
    const project = (await call('POST', '/v1/projects', { name: 'read after write' })).json;
    const read = await call('GET', `/v1/projects/${project.project_id}`);
    return read.status === 200 && read.json.name === 'read after write';
  },
  'paging to the end': async (call) => {
    const projects = (await call('GET', '/v1/projects?limit=200')).json.data as Array<{
      project_id: string;
      name: string;
    }>;
    const demo = projects.find((project) => project.name === 'Website relaunch');
    if (!demo) return false;
    let cursor: string | null = null;
    const seen = new Set<string>();
    for (let pages = 0; pages < 10; pages++) {
      const page: { data: Array<{ task_id: string }>; next_cursor: string | null } = (
        await call(
          'GET',
          `/v1/projects/${demo.project_id}/tasks?limit=20${cursor ? `&cursor=${cursor}` : ''}`,
        )
      ).json;
      for (const task of page.data) seen.add(task.task_id);
      cursor = page.next_cursor;
      if (cursor === null) return seen.size === 55;
    }
    return false;
  },
  '404 after delete': async (call) => {
    const project = (await call('POST', '/v1/projects', { name: 'to delete' })).json;
    const deleted = await call('DELETE', `/v1/projects/${project.project_id}`);
    return (
      deleted.status === 204 &&
      (await call('GET', `/v1/projects/${project.project_id}`)).status === 404
    );
  },
  '412 on a stale If-Match': async (call) => {
    const created = await call('POST', '/v1/projects', { name: 'versioned' });
    const etag = created.headers.get('etag')!;
    await call(
      'PATCH',
      `/v1/projects/${created.json.project_id}`,
      { name: 'changed' },
      { 'If-Match': etag },
    );
    return (
      (
        await call(
          'PATCH',
          `/v1/projects/${created.json.project_id}`,
          { name: 'stale' },
          { 'If-Match': etag },
        )
      ).status === 412
    );
  },
  'idempotent replay': async (call) => {
    const key = `replay-${Date.now()}`;
    const first = await call('POST', '/v1/projects', { name: 'once' }, { 'Idempotency-Key': key });
    const again = await call('POST', '/v1/projects', { name: 'once' }, { 'Idempotency-Key': key });
    return (
      first.headers.get('idempotent-replayed') !== 'true' &&
      again.headers.get('idempotent-replayed') === 'true' &&
      again.json.project_id === first.json.project_id
    );
  },
  'long poll': async (call) => {
    const head = (await call('GET', '/v1/events?limit=200')).json;
    let cursor = head.next_cursor;
    for (let more = head.has_more; more;) {
      const page = (await call('GET', `/v1/events?limit=200&cursor=${cursor}`)).json;
      cursor = page.next_cursor;
      more = page.has_more;
    }
    const started = Date.now();
    const polled = call('GET', `/v1/events?cursor=${cursor}&wait=5`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await call('POST', '/v1/projects', { name: 'wakes the poll' });
    const page = (await polled).json;
    return (
      page.data.length === 1 &&
      page.data[0].type === 'project.created' &&
      Date.now() - started < 4500
    );
  },
};

it('passes every flow through the validating proxy, with no violation of the document', async () => {
  const results: Record<string, boolean> = {};
  for (const [name, flow] of Object.entries(flows)) results[name] = await flow(caller(proxyUrl));
  expect(results).toEqual(Object.fromEntries(Object.keys(flows).map((name) => [name, true])));
  expect(violations).toEqual([]);
}, 60_000);

it('shows which flows the plain mock fails', async () => {
  const results: Record<string, boolean> = {};
  for (const [name, flow] of Object.entries(flows))
    results[name] = await flow(caller(mock.url)).catch(() => false);
  // The mock stores nothing: it cannot read back, page to an end, forget a deleted project, know a version or replay.
  expect(results).toEqual({
    'read after write': false,
    'paging to the end': false,
    '404 after delete': false,
    '412 on a stale If-Match': false,
    'idempotent replay': false,
    'long poll': false,
  });
}, 60_000);

it('refuses a MySQL DATABASE_URL, and leaves no file behind when stopped', async () => {
  const refused = spawnSync(process.execPath, [entryPoint], {
    env: { ...process.env, DATABASE_URL: 'mysql://root@127.0.0.1:3306/test' },
    encoding: 'utf8',
  });
  expect(refused.status).toBe(1);
  expect(refused.stderr.trim()).toBe(
    'sandbox: the sandbox never touches a MySQL database: unset DATABASE_URL (the sandbox makes a throwaway SQLite file)',
  );
  const exited = new Promise((resolve) => sandbox.once('exit', resolve));
  sandbox.kill('SIGINT');
  await exited;
  expect(sandboxFolders().filter((name) => !foldersBefore.includes(name))).toEqual([]);
}, 30_000);

it('refuses to --keep a database it did not make, changing nothing in it, and reuses one it made', async () => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-keep-'));
  try {
    // A database of the real service: migrated, as `npm start` leaves it.
    const real = path.join(folder, 'real.sqlite');
    const migrated = spawnSync(
      process.execPath,
      [path.join(projectRoot, 'dist', 'src', 'cli', 'migrate.js')],
      {
        env: { ...process.env, DATABASE_URL: `sqlite:${real}` },
        encoding: 'utf8',
      },
    );
    expect(migrated.status).toBe(0);
    const before = fs.readFileSync(real);
    const refused = spawnSync(process.execPath, [entryPoint, '--keep', real], {
      env: { ...process.env, DATABASE_URL: '', LOG_LEVEL: 'silent' },
      encoding: 'utf8',
    });
    expect(refused.status).toBe(1);
    expect(refused.stderr.trim()).toBe(
      `sandbox: ${real} was not made by the sandbox: it would add demo tenants and keys that never expire to it, so it reuses only a file it made itself; give --keep a new path`,
    );
    expect(fs.readFileSync(real).equals(before)).toBe(true);

    // One it made is reused; it listens on loopback though HOST says otherwise.
    const kept = path.join(folder, 'kept.sqlite');
    for (let start = 0; start < 2; start++) {
      const run = spawn(process.execPath, [entryPoint, '--keep', kept], {
        env: { ...process.env, DATABASE_URL: '', LOG_LEVEL: 'silent', HOST: '0.0.0.0', PORT: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const banner = await new Promise<string>((resolve, reject) => {
        let text = '';
        run.stdout!.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (text.includes('Database:')) resolve(text);
        });
        run.once('exit', (code) => reject(new Error(`the sandbox exited with ${code}: ${text}`)));
      });
      expect(banner).toMatch(/http:\/\/127\.0\.0\.1:\d+/);
      expect(banner).not.toContain('0.0.0.0');
      const exited = new Promise((resolve) => run.once('exit', resolve));
      run.kill('SIGINT');
      await exited;
    }
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
}, 60_000);
