/**
 * One start at a time migrates: a start waits while another owns the migrations, and a lock left
 * by a start that stopped while migrating is released by `migrate unlock`. (Starts racing for real
 * are in concurrent-start.test.ts, and on three Galera nodes in galera.cluster.test.ts.)
 */
import type { Knex } from 'knex';
import { createKnex } from '../../src/db/knex';
import { migrateToLatest, releaseMigrationLocks } from '../../src/db/migrate';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let database: TestDatabase;
let knex: Knex;

beforeEach(async () => {
  database = await createTestDatabase();
  knex = createKnex(database.config);
});
afterEach(async () => {
  await knex.destroy();
  await database.drop();
});

/** Resolves with the outcome, or with 'pending' if `promise` has not settled within `ms`. */
const settledWithin = (promise: Promise<unknown>, ms: number) =>
  Promise.race([
    promise.then(() => 'migrated'),
    new Promise((resolve) => setTimeout(() => resolve('pending'), ms)),
  ]);

it('waits while another start owns the migrations, and migrates once it lets go', async () => {
  await knex.schema.createTable('migration_owner', (table) => {
    table.integer('id').primary();
    table.string('owner', 36).nullable();
  });
  await knex('migration_owner').insert({ id: 1, owner: 'another-start' });
  let waits = 0;
  const migrating = migrateToLatest(knex, { onWait: () => waits++ });
  expect(await settledWithin(migrating, 1500)).toBe('pending');
  expect(await knex.schema.hasTable('tasks')).toBe(false);

  await knex('migration_owner').update({ owner: null });
  // However long all the migrations take on a loaded machine: what counts is that they run.
  expect(await settledWithin(migrating, 30_000)).toBe('migrated');
  expect(waits).toBe(1);
  expect(await knex.schema.hasTable('tasks')).toBe(true);
  expect(await knex('migration_owner').select('owner')).toEqual([{ owner: null }]);
  expect(await knex('knex_migrations_lock').select('is_locked')).toEqual([{ is_locked: 0 }]);
}, 60_000);

it('migrates after unlock when a start stopped while migrating left both locks taken', async () => {
  await migrateToLatest(knex);
  await knex.migrate.rollback();
  await knex('migration_owner').update({ owner: 'a-start-that-died' });
  await knex('knex_migrations_lock').update({ is_locked: 1 });
  const migrating = migrateToLatest(knex);
  expect(await settledWithin(migrating, 1000)).toBe('pending');

  await releaseMigrationLocks(knex);
  expect(await migrating).not.toEqual([]);
  expect((await knex.migrate.list())[1]).toEqual([]);
});
