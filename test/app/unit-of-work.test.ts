/**
 * The unit of work, with no HTTP: a change and the answer bound to its Idempotency-Key commit
 * together or not at all, a bound key answers as it did, a conflict runs the work again, and the
 * numbering hears of a change only once it has committed. On the engine this jest project runs
 * against.
 */
import type { Knex } from 'knex';
import {
  createUnitOfWork,
  type Change,
  type Outcome,
  type UnitOfWork,
} from '../../src/app/unit-of-work';
import { WriteConflictError } from '../../src/db/database-errors';
import { createKnex } from '../../src/db/knex';
import { migrateToLatest } from '../../src/db/migrate';
import { createRepositories, type Repositories } from '../../src/all-repositories';
import type { WriteContext } from '../../src/db/transactions';
import { IdempotencyKeyReusedError, IdempotencyKeyTakenError } from '../../src/errors';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let database: TestDatabase;
let knex: Knex;
let repositories: Repositories;
let tenantId: string;
let unitOfWork: UnitOfWork;
/** What the projects table held each time the numbering was woken. */
let seenWhenWoken: number[];

beforeAll(async () => {
  database = await createTestDatabase();
  knex = createKnex(database.config);
  await migrateToLatest(knex);
  repositories = createRepositories(knex);
  tenantId = (await repositories.tenants.findOrCreate('unit-of-work')).tenant_id;
}, 60_000);
afterAll(async () => {
  await knex?.destroy();
  await database?.drop();
});
beforeEach(async () => {
  await knex('projects').delete();
  // This test's own list: a count still being read for the test before lands in that one's.
  const seen: number[] = (seenWhenWoken = []);
  unitOfWork = createUnitOfWork(repositories, {
    // Synchronous, as the numbering's poke is; the count is read after, from the database.
    onCommitted: () => void countProjects().then((n) => seen.push(n)),
  });
});

const countProjects = async () => Number((await knex('projects').count({ n: '*' }))[0].n);
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

let requests = 0;
function change(body: unknown, idempotencyKey?: string, operationId = 'createProject'): Change {
  return { tenantId, requestId: `request-${++requests}`, operationId, body, idempotencyKey };
}

/** Creates a project named as asked, answering 201 with it; counts its runs. */
function createProject(name: string) {
  const work = Object.assign(
    async (write: WriteContext) => {
      work.runs++;
      const project = await repositories.projects.create(
        tenantId,
        { name, description: '' },
        write,
      );
      return {
        status: 201,
        headers: { Location: `/p/${project.value.project_id}` },
        body: project.value,
      };
    },
    { runs: 0 },
  );
  return work;
}

it('commits a change without a key and wakes the numbering once it is there to see', async () => {
  const work = createProject('plain');
  const { answer, replayed } = await unitOfWork.run(change({ name: 'plain' }), work);
  await settle();
  expect([answer.status, replayed, work.runs]).toEqual([201, false, 1]);
  expect(await countProjects()).toBe(1);
  expect(seenWhenWoken).toEqual([1]);
});

it('leaves nothing of a change whose work fails, and does not wake the numbering', async () => {
  const failing = async (write: WriteContext) => {
    await repositories.projects.create(tenantId, { name: 'half', description: '' }, write);
    throw new Error('the work failed after its first write');
  };
  await expect(unitOfWork.run(change({ name: 'half' }, 'key-half'), failing)).rejects.toThrow(
    'the work failed',
  );
  await settle();
  expect([await countProjects(), seenWhenWoken]).toEqual([0, []]);
  // The key was not bound: a retry runs.
  const work = createProject('half');
  const retried = await unitOfWork.run(change({ name: 'half' }, 'key-half'), work);
  expect([retried.replayed, work.runs, await countProjects()]).toEqual([false, 1, 1]);
});

it('replays the answer bound to a key, for the same body in any key order, without running', async () => {
  const first = createProject('keyed');
  const body = { name: 'keyed', description: 'd' };
  const original = await unitOfWork.run(change(body, 'key-1'), first);
  const again = createProject('keyed');
  const replay = await unitOfWork.run(change({ description: 'd', name: 'keyed' }, 'key-1'), again);
  await settle();
  expect(replay).toEqual({ answer: JSON.parse(JSON.stringify(original.answer)), replayed: true });
  expect([first.runs, again.runs, await countProjects(), seenWhenWoken]).toEqual([1, 0, 1, [1]]);
});

it('refuses a bound key with another body or operation, running nothing', async () => {
  await unitOfWork.run(change({ name: 'one' }, 'key-2'), createProject('one'));
  const other = createProject('two');
  await expect(unitOfWork.run(change({ name: 'two' }, 'key-2'), other)).rejects.toBeInstanceOf(
    IdempotencyKeyReusedError,
  );
  await expect(
    unitOfWork.run(change({ name: 'one' }, 'key-2', 'createTask'), other),
  ).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
  expect([other.runs, await countProjects()]).toEqual([0, 1]);
});

it('keeps keys apart per tenant', async () => {
  const otherTenant = (await repositories.tenants.findOrCreate('unit-of-work-other')).tenant_id;
  await unitOfWork.run(change({ name: 'a' }, 'shared-key'), createProject('a'));
  const theirs = createProject('a');
  const answered = await unitOfWork.run(
    { ...change({ name: 'a' }, 'shared-key'), tenantId: otherTenant },
    theirs,
  );
  expect([answered.replayed, theirs.runs]).toEqual([false, 1]);
});

it('runs the work again after a conflict the database reports, and commits it once', async () => {
  const work = createProject('conflicted');
  let tries = 0;
  const conflictingOnce = async (write: WriteContext) => {
    const answer = await work(write);
    if (++tries === 1) throw new WriteConflictError();
    return answer;
  };
  const { answer } = await unitOfWork.run(change({ name: 'conflicted' }, 'key-3'), conflictingOnce);
  await settle();
  expect([answer.status, work.runs, await countProjects(), seenWhenWoken]).toEqual([
    201,
    2,
    1,
    [1],
  ]);
});

it('gives one change and one answer to requests racing with one key', async () => {
  const works = Array.from({ length: 6 }, () => createProject('raced'));
  const settled = await Promise.allSettled(
    works.map((work) => unitOfWork.run(change({ name: 'raced' }, 'key-raced'), work)),
  );
  expect(settled.filter((s) => s.status === 'rejected')).toEqual([]);
  const outcomes = settled.map((s) => (s as PromiseFulfilledResult<Outcome>).value);
  expect(await countProjects()).toBe(1);
  expect(outcomes.filter((o) => !o.replayed)).toHaveLength(1);
  const bodies = new Set(
    outcomes.map((o) => JSON.stringify((o.answer.body as { project_id: string }).project_id)),
  );
  expect(bodies.size).toBe(1);
});

it('answers a keyed change whose duplicate key is not its key as it would without a key, after one try, not for ever', async () => {
  // The database says the key is taken, yet nothing is bound to it: the duplicate was another row's.
  const duplicate = Object.assign(new Error("Duplicate entry 'x' for key 'PRIMARY'"), {
    code: 'ER_DUP_ENTRY',
  });
  let binds = 0;
  const confused = createUnitOfWork({
    inTransaction: repositories.inTransaction,
    idempotency: {
      ...repositories.idempotency,
      bind: async () => {
        binds++;
        throw new IdempotencyKeyTakenError({ cause: duplicate });
      },
    },
  });
  const work = createProject('duplicate');
  await expect(confused.run(change({ name: 'duplicate' }, 'key-dup'), work)).rejects.toBe(
    duplicate,
  );
  expect([binds, work.runs, await countProjects()]).toEqual([1, 1, 0]);
});
