import type { Knex } from 'knex';

// The Task fields one of which a `task.updated` must change to be sent to the endpoint (a JSON
// array; null: any change), src/versions/changes/webhook-subscriptions.ts.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (table) => {
    table.string('task_fields', 200).nullable();
  });
}

// Not knex's dropColumn: on SQLite it copies the table (see 20261128090000).
export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhook_endpoints DROP COLUMN task_fields');
}
