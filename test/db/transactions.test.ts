/**
 * A transaction's held statements (`trx.later`) go to the database with the next statement, or
 * with COMMIT, in one round trip on MySQL: they must keep the transaction's promise all the same,
 * every row or none, whichever statement of a packet fails.
 */
import type { Knex } from 'knex';
import { affectedRows } from '../../src/db/raw-answers';
import {
  isDuplicateKey,
  readingAgainIfLost,
  WriteConflictError,
} from '../../src/db/database-errors';
import { DatabaseUnavailableError } from '../../src/errors';
import { inTransaction, requestConflicts, type Transaction } from '../../src/db/transactions';
import { databaseWithTenant, projectRow, statementsSent } from '../support/statements-sent';
import { testEngine } from '../support/test-database';

let database: Awaited<ReturnType<typeof databaseWithTenant>>;
let knex: Knex;

beforeAll(async () => {
  database = await databaseWithTenant();
  knex = database.knex;
});
afterAll(() => database.close());

const insert = (id: string) => knex('projects').insert(projectRow(id)).toSQL();
const projectIds = async (prefix: string) =>
  (await knex('projects')
    .where('project_id', 'like', `${prefix}%`)
    .orderBy('project_id')
    .pluck('project_id')) as string[];
const sent = (run: () => Promise<unknown>) => statementsSent(knex, run);

it('commits held statements with the next statement and with COMMIT, in order', async () => {
  const { statements, packets } = await sent(() =>
    inTransaction(knex, 'request', async ({ trx }) => {
      trx.later(insert('a-1'));
      await trx('projects').insert(projectRow('a-2'));
      trx.later(insert('a-3'));
    }),
  );
  expect(await projectIds('a-')).toEqual(['a-1', 'a-2', 'a-3']);
  expect(statements).toEqual(['BEGIN', 'INSERT', 'INSERT', 'INSERT', 'COMMIT']);
  expect(packets).toBe(2);
});

it('rolls back every row when a held statement fails with the statement it went with', async () => {
  await knex('projects').insert(projectRow('b-taken'));
  const attempt = inTransaction(knex, 'request', async ({ trx }) => {
    await trx('projects').insert(projectRow('b-1'));
    trx.later(insert('b-2'));
    trx.later(insert('b-taken'));
    await trx('projects').insert(projectRow('b-3'));
  });
  // By its message: better-sqlite3's error class can be another jest module registry's, not an Error of this one.
  await expect(attempt).rejects.toMatchObject({
    message: expect.stringMatching(
      testEngine === 'mysql' ? /Duplicate entry/ : /UNIQUE constraint failed/,
    ),
  });
  expect(await projectIds('b-')).toEqual(['b-taken']);
});

it('commits nothing when a held statement fails with COMMIT', async () => {
  await knex('projects').insert(projectRow('c-taken'));
  const attempt = inTransaction(knex, 'request', async ({ trx }) => {
    await trx('projects').insert(projectRow('c-1'));
    trx.later(insert('c-taken'));
  });
  await expect(attempt).rejects.toMatchObject({
    message: expect.stringMatching(
      testEngine === 'mysql' ? /Duplicate entry/ : /UNIQUE constraint failed/,
    ),
  });
  expect(await projectIds('c-')).toEqual(['c-taken']);
  // The connection went back to the pool clean: the next transaction on it commits as usual.
  await inTransaction(knex, 'request', async ({ trx }) => trx.later(insert('c-2')));
  expect(await projectIds('c-')).toEqual(['c-2', 'c-taken']);
});

it('sends nothing for work that fails before its first statement, and holds nothing over to the next', async () => {
  const failing = await sent(() =>
    inTransaction(knex, 'request', async ({ trx }) => {
      trx.later(insert('d-1'));
      throw new Error('refused before any statement was sent');
    }),
  );
  expect(failing.packets).toBe(0);
  await inTransaction(knex, 'request', async ({ trx }) => trx.later(insert('d-2')));
  expect(await projectIds('d-')).toEqual(['d-2']);
});

it("fails with what a held statement's failure means; a failure it does not know stays the database's", async () => {
  await knex('projects').insert(projectRow('e-taken'));
  class TakenError extends Error {}
  const named = {
    failureMeans: (error: unknown) => (isDuplicateKey(error) ? new TakenError('taken') : undefined),
  };
  const attempt = inTransaction(knex, 'request', async ({ trx }) => {
    trx.later({ ...insert('e-taken'), ...named });
    trx.later(insert('e-1'));
  });
  await expect(attempt).rejects.toBeInstanceOf(TakenError);
  const unknown = inTransaction(knex, 'request', async ({ trx }) => {
    trx.later({ ...insert('e-2'), failureMeans: () => undefined });
    trx.later(insert('e-taken'));
  });
  await expect(unknown).rejects.toMatchObject({
    message: expect.stringMatching(
      testEngine === 'mysql' ? /Duplicate entry/ : /UNIQUE constraint failed/,
    ),
  });
  expect(await projectIds('e-')).toEqual(['e-taken']);
});

it("fails with what a held statement's answer means, and what was held after it, conditional on it, changes nothing", async () => {
  await knex('projects').insert(projectRow('f-1'));
  class ChangedNothing extends Error {}
  const rename = (version: number) => ({
    ...knex('projects')
      .where({ project_id: 'f-1', version })
      .update({ name: 'renamed', version: version + 1 })
      .toSQL(),
    answerMeans: (result: unknown) =>
      affectedRows(result) === 0 ? new ChangedNothing() : undefined,
  });
  // Written only where the rename took effect, as a change's event is.
  const renamedTwin = (version: number) => ({
    sql: "insert into projects (project_id, tenant_id, name, description, created_at, updated_at, version) select 'f-2', tenant_id, name, description, created_at, updated_at, 1 from projects where project_id = 'f-1' and version = ?",
    bindings: [version],
  });
  const stale = inTransaction(knex, 'request', async ({ trx }) => {
    trx.later(rename(7));
    trx.later(renamedTwin(8));
  });
  await expect(stale).rejects.toBeInstanceOf(ChangedNothing);
  expect(
    await knex('projects')
      .where('project_id', 'like', 'f-%')
      .select('project_id', 'name', 'version'),
  ).toEqual([{ project_id: 'f-1', name: 'f-1', version: 1 }]);

  await inTransaction(knex, 'request', async ({ trx }) => {
    trx.later(rename(1));
    trx.later(renamedTwin(2));
  });
  expect(
    await knex('projects')
      .where('project_id', 'like', 'f-%')
      .orderBy('project_id')
      .select('project_id', 'name', 'version'),
  ).toEqual([
    { project_id: 'f-1', name: 'renamed', version: 2 },
    { project_id: 'f-2', name: 'renamed', version: 1 },
  ]);
});

it('runs again, a few times at most, a transaction whose connection was lost before its COMMIT was sent', async () => {
  // What mysql2 answers when a proxy cuts the session under a statement.
  const lost = () =>
    Object.assign(new Error('Connection lost: The server closed the connection.'), {
      code: 'PROTOCOL_CONNECTION_LOST',
      fatal: true,
    });
  let runs = 0;
  await inTransaction(knex, 'request', async ({ trx }) => {
    runs++;
    await trx('projects').insert(projectRow(`lost-${runs}`));
    if (runs === 1) throw lost();
  });
  expect(runs).toBe(2);
  expect(await projectIds('lost-')).toEqual(['lost-2']);

  // As a repository's statement answers it, the driver's error its cause.
  runs = 0;
  const never = inTransaction(knex, 'request', async () => {
    runs++;
    throw new DatabaseUnavailableError(lost());
  });
  await expect(never).rejects.toBeInstanceOf(DatabaseUnavailableError);
  expect(runs).toBe(3);
});

it('sends a read whose connection was lost once more, and only once', async () => {
  const lost = () =>
    Object.assign(new Error('Connection lost'), { code: 'PROTOCOL_CONNECTION_LOST' });
  let reads = 0;
  const lostOnce = () => (++reads === 1 ? Promise.reject(lost()) : Promise.resolve('read'));
  expect(await readingAgainIfLost(lostOnce)).toBe('read');
  expect(reads).toBe(2);

  reads = 0;
  await expect(
    readingAgainIfLost(() => {
      reads++;
      return Promise.reject(lost());
    }),
  ).rejects.toMatchObject({ code: 'PROTOCOL_CONNECTION_LOST' });
  expect(reads).toBe(2);

  reads = 0;
  const refused = Object.assign(new Error('refused'), { code: 'ER_ACCESS_DENIED_ERROR' });
  await expect(
    readingAgainIfLost(() => {
      reads++;
      return Promise.reject(refused);
    }),
  ).rejects.toBe(refused);
  expect(reads).toBe(1);
});

it("counts the conflicts a request's transaction met and ran again after, and no background work's", async () => {
  await knex('projects').insert([projectRow('deadlock-a'), projectRow('deadlock-b')]);
  const rename = (trx: Transaction, id: string) =>
    trx('projects')
      .where('project_id', id)
      .update({ name: `renamed by ${id}` });
  const before = requestConflicts(knex);
  if (testEngine === 'mysql') {
    // A real deadlock: each takes one row, then waits for the other's; MariaDB aborts one of them.
    let bothHold: () => void = () => {};
    const holding = new Promise<void>((resolve) => {
      let held = 0;
      bothHold = () => ++held === 2 && resolve();
    });
    const crossing = (first: string, second: string) =>
      inTransaction(
        knex,
        `request-${first}`,
        async ({ trx }) => {
          await rename(trx, first);
          bothHold();
          await holding;
          await rename(trx, second);
        },
        { forRequest: true },
      );
    await Promise.all([crossing('deadlock-a', 'deadlock-b'), crossing('deadlock-b', 'deadlock-a')]);
  } else {
    // SQLite has one writer and never deadlocks: the service's own conflict (a version that moved).
    let runs = 0;
    await inTransaction(
      knex,
      'request',
      async ({ trx }) => {
        await rename(trx, 'deadlock-a');
        if (++runs === 1) throw new WriteConflictError();
      },
      { forRequest: true },
    );
  }
  expect(requestConflicts(knex)).toBe(before + 1);
  // Background work's conflicts are its own races, not a cost to clients: not counted.
  let runs = 0;
  await inTransaction(knex, 'event-numbering', async () => {
    if (++runs === 1) throw new WriteConflictError();
  });
  expect(runs).toBe(2);
  expect(requestConflicts(knex)).toBe(before + 1);
});
