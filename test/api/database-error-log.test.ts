/**
 * A statement that fails leaves its shape and error code in the log, never its values: creates
 * carrying a webhook secret, an Idempotency-Key and body text fail (refused by a trigger; on
 * MySQL also waiting out a table lock, or with their connections killed), and none of those
 * reaches a log line.
 */
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { capturedLog } from '../support/captured-log';
import { testEngine } from '../support/test-database';
import { startTestService, type TestService } from '../support/test-service';

const log = capturedLog();
let api: TestService;
let key: string;
let projectId: string;

beforeAll(async () => {
  // A short statement bound, so a statement waiting on a MySQL table lock fails within seconds, and
  // long enough to find the waiting connections and kill them first.
  api = await startTestService({
    config: { logLevel: 'info', statementTimeoutSeconds: 3, webhookAllowPrivateTargets: true },
    logDestination: log.stream,
  });
  key = await api.createKey('acme');
  projectId = (await api.client(key).POST('/v1/projects', { body: { name: 'fixture' } })).data!
    .project_id;
});
afterAll(() => api.stop());

/** Text no log line may carry: each create's values, made unique to this run. */
const marker = (what: string) => `${what}-${randomBytes(6).toString('hex')}`;

/** MySQL: holds every table the creates write to until released. */
async function lockTables(): Promise<{ release(): Promise<void>; killWaiting(): Promise<number> }> {
  const connection = api.service.knex.client.config.connection as {
    host: string;
    port: number;
    user: string;
    database: string;
  };
  const holder = await mysql.createConnection({
    host: connection.host,
    port: connection.port,
    user: connection.user,
    database: connection.database,
  });
  await holder.query('LOCK TABLES projects WRITE, tasks WRITE, webhook_endpoints WRITE');
  return {
    async release() {
      await holder.query('UNLOCK TABLES');
      await holder.end();
    },
    // The service's connections waiting for the lock, ended by the server.
    async killWaiting() {
      const [rows] = await holder.query<mysql.RowDataPacket[]>(
        "SELECT id FROM information_schema.processlist WHERE db = DATABASE() AND id <> CONNECTION_ID() AND state LIKE 'Waiting for table%'",
      );
      for (const { id } of rows) await holder.query(`KILL ${Number(id)}`);
      return rows.length;
    },
  };
}

/** The creates a client could send, each with values that must stay out of the log. */
function creates() {
  const texts = {
    idempotencyKey: marker('idempotency-key'),
    title: marker('task-title'),
    description: marker('task-description'),
    name: marker('project-name'),
    hookDescription: marker('hook-description'),
  };
  const post = (path: string, body: unknown, idempotencyKey: string) =>
    api.send('POST', path, {
      key,
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': idempotencyKey },
      body: JSON.stringify(body),
    });
  const sent = [
    () =>
      post(
        '/v1/projects',
        { name: texts.name, description: texts.description },
        `${texts.idempotencyKey}-p`,
      ),
    () =>
      post(
        '/v1/tasks',
        { project_id: projectId, title: texts.title, description: texts.description },
        `${texts.idempotencyKey}-t`,
      ),
    () =>
      post(
        '/v1/webhook-endpoints',
        { url: `https://127.0.0.1/${texts.hookDescription}`, description: texts.hookDescription },
        `${texts.idempotencyKey}-w`,
      ),
  ];
  return { texts: Object.values(texts), sent };
}

/** What the log says of the failures: no sent text, no webhook secret, and each failure's code. */
function expectNothingSecretLogged(texts: string[], message: string): void {
  const logged = log.lines.map((line) => JSON.stringify(line));
  for (const text of [...texts, 'whsec_'])
    expect(logged.filter((line) => line.includes(text))).toEqual([]);
  const failures = log.withMessage(message);
  expect(failures.length).toBeGreaterThan(0);
  for (const line of failures) {
    const err = line.err as { code?: unknown; errno?: unknown };
    // The line itself in the failure's report, to say which error came without a code.
    if (typeof err.code !== 'string' && typeof err.errno !== 'number')
      throw new Error(`a failure logged without its code: ${JSON.stringify(line)}`);
  }
}

/** Triggers that refuse every insert into the tables the creates write to. */
const refusingTables = ['projects', 'tasks', 'webhook_endpoints'];
const refusal = (table: string) =>
  testEngine === 'sqlite'
    ? `CREATE TRIGGER refuse_${table} BEFORE INSERT ON ${table} BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`
    : `CREATE TRIGGER refuse_${table} BEFORE INSERT ON ${table} FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused by the test'`;

it('logs a statement the database refused by its shape and code, without its values', async () => {
  for (const table of refusingTables) await api.service.knex.raw(refusal(table));
  const { texts, sent } = creates();
  try {
    for (const send of sent) expect((await send()).status).toBe(500);
  } finally {
    for (const table of refusingTables) await api.service.knex.raw(`DROP TRIGGER refuse_${table}`);
  }
  expectNothingSecretLogged(texts, 'unexpected fault');
  // The statement's shape is there, its values replaced by placeholders.
  expect(
    log.withMessage('unexpected fault').map((line) => (line.err as { message: string }).message),
  ).toContainEqual(expect.stringMatching(/insert into .*webhook_endpoints.* values \(\?/));
});

it("logs the database's message without the value it quotes", async () => {
  const title = marker('duplicated-title');
  await api.service.knex.raw('CREATE UNIQUE INDEX refuse_duplicate_titles ON tasks (title)');
  const post = () =>
    api.send('POST', '/v1/tasks', {
      key,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ project_id: projectId, title }),
    });
  try {
    expect((await post()).status).toBe(201);
    expect((await post()).status).toBe(500);
  } finally {
    await api.service.knex.raw(
      testEngine === 'sqlite'
        ? 'DROP INDEX refuse_duplicate_titles'
        : 'DROP INDEX refuse_duplicate_titles ON tasks',
    );
  }
  expectNothingSecretLogged([title], 'unexpected fault');
  const duplicate = log
    .withMessage('unexpected fault')
    .find((line) =>
      ['ER_DUP_ENTRY', 'SQLITE_CONSTRAINT_UNIQUE'].includes((line.err as { code: string }).code),
    );
  expect((duplicate?.err as { message: string }).message).toMatch(
    testEngine === 'sqlite' ? /UNIQUE constraint failed: tasks\.title$/ : /Duplicate entry '…'$/,
  );
});

// SQLite waits out a lock 5 s a statement, on its one connection, which the background work shares:
// the refusal above makes its statements fail there.
if (testEngine === 'mysql') {
  it('logs a statement that waited out a lock by its shape and code, without its values', async () => {
    const lock = await lockTables();
    const { texts, sent } = creates();
    try {
      expect(
        (await Promise.all(sent.map((send) => send()))).map((answer) => answer.status),
      ).toEqual([503, 503, 503]);
    } finally {
      await lock.release();
    }
    expectNothingSecretLogged(texts, 'database unavailable');
  });

  it('logs a statement whose connection the server killed by its shape and code, without its values', async () => {
    log.lines.length = 0;
    const lock = await lockTables();
    const { texts, sent } = creates();
    let killed = 0;
    try {
      let answered = 0;
      const answers = sent.map((send) => send().finally(() => answered++));
      // Background work waits on the lock too: its connections are killed with the requests'.
      for (const deadline = Date.now() + 5000; answered < sent.length && Date.now() < deadline;) {
        killed += await lock.killWaiting();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect((await Promise.all(answers)).map((answer) => answer.status)).toEqual([503, 503, 503]);
    } finally {
      await lock.release();
    }
    expect(killed).toBeGreaterThan(0);
    expectNothingSecretLogged(texts, 'database unavailable');
    // The server's ending of the connection, told apart from a statement that ran out of time.
    const lost = log
      .withMessage('database unavailable')
      .filter(
        (line) =>
          (line.err as { code?: string }).code === 'PROTOCOL_CONNECTION_LOST' ||
          (line.err as { errno?: number }).errno === 1927,
      );
    expect(lost.length).toBeGreaterThan(0);
  });
}
