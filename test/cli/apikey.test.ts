/**
 * `npm run -s apikey -- ...` as a user runs it (its compiled entry point, which the npm script
 * builds and then runs; the test command builds first), against the database a running service
 * uses.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { DatabaseConfig } from '../../src/config';
import { projectRoot } from '../../src/paths';
import { startService, type RunningService } from '../../src/server';
import { runCli } from '../support/run-cli';
import { testConfig } from '../support/test-config';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

const entryPoint = path.join(projectRoot, 'dist', 'src', 'cli', 'apikey.js');
let database: TestDatabase;
let service: RunningService;

function databaseUrl(config: DatabaseConfig): string {
  return config.client === 'sqlite' ? `sqlite:${config.filename}` : config.url;
}

async function apikey(...args: string[]) {
  const result = await runCli(entryPoint, args, {
    ...process.env,
    DATABASE_URL: databaseUrl(database.config),
  });
  return { ...result, lastLine: result.stdout.trimEnd().split('\n').pop()! };
}

function call(key: string, method: string, body?: unknown) {
  return fetch(`${service.url}/v1/projects`, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

beforeAll(async () => {
  if (!fs.existsSync(entryPoint))
    throw new Error(`${entryPoint} is missing: run npm run build (the test command does)`);
  database = await createTestDatabase();
  service = await startService(testConfig(database.config));
});
afterAll(async () => {
  await service.stop();
  await database.drop();
});

it('creates a key that works at once, printed alone on the last line and stored only as a hash', async () => {
  const created = await apikey('create', '--tenant', 'acme');
  expect(created.status).toBe(0);
  const key = created.lastLine;
  expect(key).toMatch(/^tt_[A-Za-z0-9_-]{43}$/);
  expect((await call(key, 'POST', { name: 'from the CLI' })).status).toBe(201);
  const stored = JSON.stringify(await service.knex('api_keys').select());
  expect(stored).not.toContain(key);
  expect(stored).not.toContain(key.slice(3));
});

it('gives a read-only key with --scopes read', async () => {
  const key = (await apikey('create', '--tenant', 'acme', '--scopes', 'read')).lastLine;
  expect((await call(key, 'GET')).status).toBe(200);
  expect((await call(key, 'POST', { name: 'x' })).status).toBe(403);
});

it('lists keys without ever showing one, with their last use, and revokes a key by its id', async () => {
  const key = (await apikey('create', '--tenant', 'globex')).lastLine;
  const row = (listing: string) =>
    listing
      .split('\n')
      .find((l) => l.includes('\tglobex\t'))!
      .split('\t');
  const listed = await apikey('list');
  expect(listed.status).toBe(0);
  expect(listed.stdout).not.toContain(key);
  const [keyId, tenant, scopes, createdAt, lastUsed, state] = row(listed.stdout);
  expect([tenant, scopes, lastUsed, state]).toEqual(['globex', 'read,write', 'never', 'active']);
  expect(createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

  expect((await call(key, 'GET')).status).toBe(200);
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(row((await apikey('list')).stdout)[4]).toMatch(/^\d{4}-\d{2}-\d{2}T/);

  expect((await apikey('revoke', keyId)).status).toBe(0);
  expect((await call(key, 'GET')).status).toBe(401);
  expect(row((await apikey('list')).stdout)[5]).toMatch(/^revoked \d{4}-/);
  expect((await apikey('revoke', keyId)).status).toBe(2);
});

it('makes a key that expires: it works until then, and is refused after', async () => {
  const created = await apikey('create', '--tenant', 'initech', '--expires-in', '90m');
  expect(created.stdout).toMatch(/expiring \d{4}-/);
  const key = created.lastLine;
  expect((await call(key, 'GET')).status).toBe(200);
  const line = (await apikey('list')).stdout.split('\n').find((l) => l.includes('\tinitech\t'))!;
  expect(line).toMatch(/\tactive until \d{4}-/);
  // Move the expiry into the past, as time would.
  await service
    .knex('api_keys')
    .where('key_id', line.split('\t')[0])
    .update({ expires_at: '2000-01-01 00:00:00.000' });
  expect((await call(key, 'GET')).status).toBe(401);
  expect((await apikey('list')).stdout).toMatch(/\tinitech\t.*\texpired 2000-01-01T00:00:00\.000Z/);
});

it("shows each key's API version, pins a key with --api-version or set-version, and moves a tenant's unpinned keys with set-version --tenant", async () => {
  const following = (await apikey('create', '--tenant', 'umbrella')).lastLine;
  const pinned = await apikey('create', '--tenant', 'umbrella', '--api-version', '2026-11-28');
  expect(pinned.stdout).toContain('pinned to API version 2026-11-28');
  const versions = async () =>
    (await apikey('list')).stdout
      .split('\n')
      .filter((l) => l.includes('\tumbrella\t'))
      .map((l) => l.split('\t')[6]);
  // A new tenant is on the newest version; the key pinned otherwise keeps its own.
  expect(await versions()).toEqual(['2026-12-15', '2026-11-28 (pinned)']);

  const moved = await apikey('set-version', '--tenant', 'umbrella', '2026-11-28');
  expect([moved.status, moved.lastLine]).toEqual([
    0,
    'Tenant umbrella is on API version 2026-11-28, with its keys not pinned otherwise.',
  ]);
  expect(await versions()).toEqual(['2026-11-28', '2026-11-28 (pinned)']);
  const answer = await fetch(`${service.url}/v1/projects`, {
    headers: { Authorization: `Bearer ${following}` },
  });
  expect(answer.headers.get('api-version')).toBe('2026-11-28');

  const keyId = (await apikey('list')).stdout
    .split('\n')
    .find((l) => l.includes('\tumbrella\t'))!
    .split('\t')[0];
  expect((await apikey('set-version', keyId, '2026-12-15')).lastLine).toBe(
    `Key ${keyId} is pinned to API version 2026-12-15.`,
  );
  expect(await versions()).toEqual(['2026-12-15 (pinned)', '2026-11-28 (pinned)']);
  const pinnedAnswer = await fetch(`${service.url}/v1/projects`, {
    headers: { Authorization: `Bearer ${following}` },
  });
  expect(pinnedAnswer.headers.get('api-version')).toBe('2026-12-15');
});

it.each([
  [['create'], /--tenant/],
  [['create', '--tenant', 'acme', '--scopes', 'admin'], /--scopes/],
  [['create', '--tenant', 'acme', '--colour', 'red'], /Unknown option/],
  [['rotate'], /usage/],
  [['create', '--tenant', 'acme', '--expires-in', 'soon'], /--expires-in/],
  [
    ['create', '--tenant', 'acme', '--api-version', '2025-01-01'],
    /supported versions are 2026-12-15, 2026-11-28/,
  ],
  [['set-version', '--tenant', 'acme'], /set-version needs/],
  [['set-version', '--tenant', 'nobody-here', '2026-11-28'], /no tenant nobody-here/],
  [['set-version', 'no-such-key', '2026-11-28'], /no key no-such-key/],
  [['set-version', 'no-such-key', 'latest'], /"latest" is not a supported API version/],
])('refuses %j with exit status 2 and says why', async (args, message) => {
  const result = await apikey(...args);
  expect(result.status).toBe(2);
  expect(result.stderr).toMatch(message);
  expect(result.stdout).toBe('');
});
