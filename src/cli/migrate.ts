/**
 * `npm run migrate`: brings the configured database (DATABASE_URL) to the latest schema, waiting
 * for another instance that is migrating it. `npm run migrate -- unlock` frees what a start that
 * stopped while migrating left taken.
 */
import { ConfigError, loadConfig } from '../config';
import { createKnex } from '../db/knex';
import { migrateToLatest, releaseMigrationLocks } from '../db/migrate';

class UsageError extends Error {}

async function main(): Promise<void> {
  const command = process.argv[2];
  if (command !== undefined && command !== 'unlock')
    throw new UsageError('usage: npm run migrate [-- unlock]');
  const knex = createKnex(loadConfig().database);
  try {
    if (command === 'unlock') {
      await releaseMigrationLocks(knex);
      console.log('Released the migration locks.');
      return;
    }
    const applied = await migrateToLatest(knex, {
      onWait: () => console.log('Another instance is migrating the database; waiting for it.'),
    });
    console.log(applied.length === 0 ? 'Already up to date.' : `Applied ${applied.join(', ')}.`);
  } finally {
    await knex.destroy();
  }
}

main().catch((error) => {
  console.error(
    error instanceof UsageError || error instanceof ConfigError ? error.message : error,
  );
  process.exit(1);
});
