import type { Knex } from 'knex';

// The version an endpoint's deliveries are given in (src/versions/changes/
// webhook-endpoint-versions.ts): every endpoint made before versions is on 2026-11-28.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (table) => {
    table.string('api_version', 10).notNullable().defaultTo('2026-11-28');
  });
}

// Not knex's dropColumn: on SQLite it copies the table (see 20261128090100).
export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhook_endpoints DROP COLUMN api_version');
}
