/** `npm run migrate`: brings the configured database (DATABASE_URL) to the latest schema. */
import { ConfigError, loadConfig } from '../config';
import { createKnex } from '../db/knex';

async function main(): Promise<void> {
  const knex = createKnex(loadConfig().database);
  try {
    const [batch, applied] = await knex.migrate.latest();
    console.log(applied.length === 0 ? 'Already up to date.' : `Batch ${batch}: applied ${applied.join(', ')}.`);
  } finally {
    await knex.destroy();
  }
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? `configuration error: ${error.message}` : error);
  process.exit(1);
});
