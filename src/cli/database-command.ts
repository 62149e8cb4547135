/**
 * What the operators' commands that work on the service's database share (`apikey`, `webhooks`):
 * the subcommand named first on the command line runs against DATABASE_URL (as `npm start` reads
 * it), migrated first; a mistake in the command line prints its message and exits 2, any other
 * failure exits 1.
 */
import type { Knex } from 'knex';
import { ConfigError, loadConfig } from '../config';
import { createKnex } from '../db/knex';
import { migrateToLatest } from '../db/migrate';

/** A mistake in the command line: its message is printed, with no stack, and the exit is 2. */
export class UsageError extends Error {}

export function runDatabaseCommand(
  usage: string,
  commands: Record<string, (knex: Knex, args: string[]) => Promise<void>>,
): void {
  const run = async () => {
    const [command, ...args] = process.argv.slice(2);
    const chosen = Object.hasOwn(commands, command ?? '') ? commands[command] : undefined;
    if (!chosen) throw new UsageError(usage);
    const knex = createKnex(loadConfig().database);
    try {
      await migrateToLatest(knex);
      await chosen(knex, args);
    } finally {
      await knex.destroy();
    }
  };
  run().catch((error) => {
    console.error(
      error instanceof UsageError || error instanceof ConfigError ? error.message : error,
    );
    process.exit(error instanceof UsageError ? 2 : 1);
  });
}
