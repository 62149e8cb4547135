import type { Knex } from 'knex';

// The TaskFilter an endpoint's task events must match, before or after their change (JSON; null:
// every task), src/versions/changes/webhook-subscriptions.ts. MEDIUMTEXT on MySQL: a filter may
// fill the 64 KiB a request body may have, which TEXT counts in bytes.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (table) => {
    table.text('task_filter', 'mediumtext').nullable();
  });
}

// Not knex's dropColumn: on SQLite it copies the table (see 20261128090000).
export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhook_endpoints DROP COLUMN task_filter');
}
