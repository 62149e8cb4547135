/**
 * On a MariaDB whose sql_mode reads quotes and backslashes otherwise (NO_BACKSLASH_ESCAPES,
 * ANSI_QUOTES, with ANSI and EMPTY_STRING_IS_NULL besides), hostile text sent through every place
 * a client controls text runs no statement of its own, and reads back byte for byte.
 */
import { issueApiKey } from '../../src/cli/issue-api-key';
import { createKnex } from '../../src/db/knex';
import { createRepositories } from '../../src/all-repositories';
import { startService, type RunningService } from '../../src/server';
import { OwnMariaDb } from '../support/own-mariadb';
import { testConfig } from '../support/test-config';

let database: OwnMariaDb;
let service: RunningService;
let key: string;

beforeAll(async () => {
  database = await OwnMariaDb.create([
    '--sql-mode=ANSI,NO_BACKSLASH_ESCAPES,ANSI_QUOTES,EMPTY_STRING_IS_NULL,STRICT_TRANS_TABLES',
  ]);
  service = await startService(
    testConfig({ client: 'mysql', url: database.url }, { webhookAllowPrivateTargets: true }),
  );
  key = (await issueApiKey(createRepositories(service.knex), 'acme', ['read', 'write'])).key;
  await service.knex.raw('CREATE TABLE canary (n INT)');
}, 120_000);
afterAll(async () => {
  await service?.stop();
  await database?.destroy();
});

/** Each breaks out of a string literal where the server reads backslashes, or double quotes, otherwise than the client wrote them. */
const injections = [
  "\\'; INSERT INTO canary VALUES (1); -- ",
  "'; INSERT INTO canary VALUES (2); -- ",
  '"; INSERT INTO canary VALUES (3); -- ',
  "\\\\'; INSERT INTO leases (name, holder, expires_at) VALUES (0x78, 0x79, NOW()); -- ",
  '`; DROP TABLE canary; -- ',
];
/** Every character a client-side escape changes, and LIKE's wildcards. */
const awkward = [
  'two \\\\ backslashes',
  "\\'",
  "'",
  '"',
  '`',
  'nul \u0000 here',
  'backslash zero \\0',
  '100% of_it',
  'lines\n\r\ttab\bback\u001az',
  "'' and \\\\' and \\\"",
  '',
];
const texts = [...injections, ...awkward];
/**
 * Idempotency-Key takes no control character (tab aside), and HTTP trims a header's value: its
 * injections end in a comment that needs no space after it.
 */
const keys = [...injections.map((text) => text.replace(/-- $/, '#')), ...awkward].filter(
  (text) => text !== '' && !/[\u0000-\u0008\u000a-\u001f\u007f]/.test(text),
);

async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    json: text === '' ? undefined : JSON.parse(text),
  };
}

async function nothingRan(): Promise<void> {
  const [canary] = await service.knex.raw('SELECT COUNT(*) AS n FROM canary');
  expect(canary).toEqual([{ n: 0 }]);
  const leases = await service.knex('leases').pluck('name');
  expect(leases).not.toContain('x');
}

it('sets the session mode on the pool that migrates as on the one that serves, whatever the server has', async () => {
  const migrating = createKnex({ client: 'mysql', url: database.url });
  try {
    const modes = async (knex: typeof migrating) =>
      (
        (await knex.raw('SELECT @@GLOBAL.sql_mode AS server, @@SESSION.sql_mode AS session')) as [
          Array<{ server: string; session: string }>,
        ]
      )[0][0];
    for (const pool of [migrating, service.knex]) {
      const { server, session } = await modes(pool);
      expect(server).toContain('NO_BACKSLASH_ESCAPES');
      expect(session).toBe('STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION');
    }
  } finally {
    await migrating.destroy();
  }
});

it('stores every text of a project, task and webhook endpoint byte for byte and runs none of it', async () => {
  // The texts side by side, each one's requests in turn.
  const roundTrip = async (text: string) => {
    const name = text === '' ? 'empty description' : text;
    const project = await call('POST', '/v1/projects', { name, description: text });
    expect(project.status).toBe(201);
    expect([project.json.name, project.json.description]).toEqual([name, text]);
    const projectId = project.json.project_id;
    const patched = await call('PATCH', `/v1/projects/${projectId}`, {
      name: `${name}.`,
      description: `.${text}`,
    });
    expect(patched.status).toBe(200);
    const task = await call('POST', '/v1/tasks', {
      project_id: projectId,
      title: name,
      description: text,
    });
    expect(task.status).toBe(201);
    const taskPatched = await call('PATCH', `/v1/tasks/${task.json.task_id}`, {
      title: `${name}!`,
      description: `!${text}`,
    });
    expect(taskPatched.status).toBe(200);
    // For an event this test never causes: nothing is delivered to it.
    const webhook = await call('POST', '/v1/webhook-endpoints', {
      url: `https://127.0.0.1/hook?q=${encodeURIComponent(text)}&raw='%25_`,
      description: text,
      event_types: ['task.deleted'],
    });
    expect(webhook.status).toBe(201);

    const readProject = await call('GET', `/v1/projects/${projectId}`);
    expect([readProject.json.name, readProject.json.description]).toEqual([`${name}.`, `.${text}`]);
    const readTask = await call('GET', `/v1/tasks/${task.json.task_id}`);
    expect([readTask.json.title, readTask.json.description]).toEqual([`${name}!`, `!${text}`]);
    const readWebhook = await call(
      'GET',
      `/v1/webhook-endpoints/${webhook.json.webhook_endpoint_id}`,
    );
    expect([readWebhook.json.url, readWebhook.json.description]).toEqual([
      `https://127.0.0.1/hook?q=${encodeURIComponent(text)}&raw='%25_`,
      text,
    ]);
    // As stored, not only as the service reads it back.
    expect(
      await service.knex('projects').first('name', 'description').where('project_id', projectId),
    ).toEqual({ name: `${name}.`, description: `.${text}` });
    expect(
      await service.knex('tasks').first('title', 'description').where('task_id', task.json.task_id),
    ).toEqual({ title: `${name}!`, description: `!${text}` });
  };
  await Promise.all(texts.map(roundTrip));
  // The events carry the texts inside JSON, where every backslash is doubled.
  let events = await call('GET', '/v1/events?limit=200&type=project.updated');
  for (
    const deadline = Date.now() + 10_000;
    events.json.data.length < texts.length && Date.now() < deadline;
  ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    events = await call('GET', '/v1/events?limit=200&type=project.updated');
  }
  const described = events.json.data.map(
    (event: { data: { object: { description: string } } }) => event.data.object.description,
  );
  expect(described.sort()).toEqual(texts.map((text) => `.${text}`).sort());
  await nothingRan();
}, 60_000);

it('binds every Idempotency-Key as sent and runs none of it', async () => {
  const bindAndReplay = async (idempotencyKey: string, i: number) => {
    const body = { name: `keyed ${i}` };
    const first = await call('POST', '/v1/projects', body, { 'Idempotency-Key': idempotencyKey });
    expect(first.status).toBe(201);
    const again = await call('POST', '/v1/projects', body, { 'Idempotency-Key': idempotencyKey });
    expect([again.status, again.headers.get('idempotent-replayed'), again.json.project_id]).toEqual(
      [201, 'true', first.json.project_id],
    );
  };
  await Promise.all(keys.map(bindAndReplay));
  const stored = await service.knex('idempotency_keys').pluck('idempotency_key');
  expect([...stored].sort()).toEqual([...keys].sort());
  await nothingRan();
}, 60_000);

it('reads hostile cursors, request ids and keys as values, refusing what is malformed', async () => {
  const project = await call('POST', '/v1/projects', { name: 'cursors' });
  const tryText = async (text: string) => {
    for (const cursor of [
      text,
      Buffer.from(text).toString('base64url'),
      Buffer.from(JSON.stringify({ s: 'created_at', at: text, id: text, after: text })).toString(
        'base64url',
      ),
    ]) {
      const query = `cursor=${encodeURIComponent(cursor)}`;
      for (const path of [
        '/v1/projects',
        `/v1/projects/${project.json.project_id}/tasks`,
        '/v1/webhook-endpoints',
        '/v1/events',
      ]) {
        expect([path, (await call('GET', `${path}?${query}`)).status]).toEqual([path, 400]);
      }
    }
    const withRequestId = await call('GET', '/v1/projects?limit=1', undefined, {
      'X-Request-Id': text,
    });
    expect(withRequestId.status).toBe(200);
    expect(withRequestId.headers.get('x-request-id')).not.toBe(text);
    expect(
      (await call('GET', '/v1/projects', undefined, { Authorization: `Bearer ${text}` })).status,
    ).toBe(401);
  };
  await Promise.all(keys.map(tryText));
  await nothingRan();
}, 60_000);
