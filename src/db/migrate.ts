/**
 * Migrating to the latest schema when several instances may start at once, on one server or on
 * a Galera cluster.
 *
 * knex's own migration lock is not enough on Galera: knex sets it inside the transaction that
 * wraps the migrations, and the first DDL commits that transaction implicitly. Two instances on
 * two nodes can both set it locally; the one whose commit loses certification is told so (1213)
 * in the middle of its migrations, and knex, taking that for a failed migration, then clears the
 * lock with a statement that now commits on its own: the lock of the instance still migrating.
 * A third start then takes it and runs the migrations being run (seen: "Table 'api_keys' already
 * exists" in one cluster run out of four). So only one instance at a time calls knex at all: it
 * owns the one row of `migration_owner`, claimed by a conditional UPDATE that commits by itself
 * (on Galera, of two claims at once one fails certification and is told so before it migrates).
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { isDuplicateKey, isWriteConflict } from './database-errors';
import { fillTaskTenants } from './task-tenants';

/** How long a start waits for another instance's migrations to end before it gives up. */
const ownerWaitMs = 60_000;

const ownerTable = 'migration_owner';

/** Makes `table` with `build` unless it exists; another start making it at the same moment is fine. */
async function ensureTable(
  knex: Knex,
  table: string,
  build: (table: Knex.CreateTableBuilder) => void,
): Promise<void> {
  if (await knex.schema.hasTable(table)) return;
  await knex.schema.createTable(table, build).catch((error: unknown) => {
    if (!/already exists/i.test(String((error as Error | null)?.message))) throw error;
  });
}

/** Inserts `row` unless its key is taken; another start inserting it at the same moment is fine (on Galera, a conflict). */
async function ensureRow(knex: Knex, table: string, row: Record<string, unknown>): Promise<void> {
  await knex(table)
    .insert(row)
    .catch((error: unknown) => {
      if (!isDuplicateKey(error) && !isWriteConflict(error)) throw error;
    });
}

/**
 * knex takes its migration lock by setting the one row of knex_migrations_lock, but on a new
 * database it inserts that row without looking twice, and two rows leave the lock untakeable
 * (knex wants exactly one row to change). The table and its row are made here, as knex makes
 * them but with a fixed key; knex then finds both and makes neither.
 */
async function ensureOneKnexLockRow(knex: Knex): Promise<void> {
  await ensureTable(knex, 'knex_migrations_lock', (table) => {
    table.increments('index').primary();
    table.integer('is_locked');
  });
  await ensureRow(knex, 'knex_migrations_lock', { index: 1, is_locked: 0 });
}

/** The owner table and its one row, made once per start, before it first tries to own them. */
async function ensureOwnerRow(knex: Knex): Promise<void> {
  await ensureTable(knex, ownerTable, (table) => {
    table.integer('id').primary();
    table.string('owner', 36).nullable();
  });
  await ensureRow(knex, ownerTable, { id: 1, owner: null });
}

/** Claims the one owner row for `owner`; false while another start owns it. */
async function claimOwnership(knex: Knex, owner: string): Promise<boolean> {
  try {
    return (await knex(ownerTable).where({ id: 1 }).whereNull('owner').update({ owner })) === 1;
  } catch (error) {
    // Two claims at once on two Galera nodes: the one that lost certification does not own it.
    if (isWriteConflict(error)) return false;
    throw error;
  }
}

async function releaseOwnership(knex: Knex, owner: string): Promise<void> {
  await knex(ownerTable).where({ id: 1, owner }).update({ owner: null });
}

/**
 * Migrates to the latest schema. Instances started at once each try to own the migrations: the
 * owner migrates, the others wait for it, then own them in turn and find nothing left to do.
 * `onWait` hears the first time this one waits.
 */
export async function migrateToLatest(
  knex: Knex,
  options: { onWait?: () => void } = {},
): Promise<string[]> {
  const owner = randomUUID();
  const deadline = Date.now() + ownerWaitMs;
  await ensureOwnerRow(knex);
  for (let waiting = false; ; waiting = true) {
    if (await claimOwnership(knex, owner)) {
      try {
        await ensureOneKnexLockRow(knex);
        const [, applied] = (await knex.migrate.latest()) as [number, string[]];
        // Tasks that instances of the version before inserted during a rolling upgrade, after
        // the migration filled the rest: this start may be the first after the last of them.
        await fillTaskTenants(knex);
        return applied;
      } finally {
        await releaseOwnership(knex, owner);
      }
    }
    if (Date.now() > deadline) {
      throw new Error(
        `Another start has been migrating this database for ${ownerWaitMs / 1000} s, or one stopped while migrating ` +
          '(then check the schema and release it: npm run -s migrate -- unlock, with this DATABASE_URL).',
      );
    }
    if (!waiting) options.onWait?.();
    await new Promise((resolve) => setTimeout(resolve, 200 + Math.random() * 300));
  }
}

/**
 * Frees what a start that stopped while migrating left taken: knex's lock, then the owner row
 * (in that order, so a start waiting for the owner row finds knex's lock free).
 */
export async function releaseMigrationLocks(knex: Knex): Promise<void> {
  // Not knex.migrate.forceFreeMigrationsLock(): it deletes the row and inserts one with a new key.
  if (await knex.schema.hasTable('knex_migrations_lock'))
    await knex('knex_migrations_lock').update({ is_locked: 0 });
  if (await knex.schema.hasTable(ownerTable)) await knex(ownerTable).update({ owner: null });
}
