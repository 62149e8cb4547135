import type { Knex } from 'knex';

// The version each tenant and key is pinned to (src/api-versions.ts): what existed before versions
// is on 2026-11-28, document 1.5.0's contract. A key follows its tenant's version unless an operator
// pinned it otherwise (api_version_pinned); the key's row carries the version it answers in, so
// authentication stays one read of one row.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tenants', (table) => {
    table.string('api_version', 10).notNullable().defaultTo('2026-11-28');
  });
  await knex.schema.alterTable('api_keys', (table) => {
    table.string('api_version', 10).notNullable().defaultTo('2026-11-28');
    table.boolean('api_version_pinned').notNullable().defaultTo(false);
  });
}

// Not knex's dropColumn: on SQLite it copies the table (see 20261128090100).
export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE api_keys DROP COLUMN api_version_pinned');
  await knex.raw('ALTER TABLE api_keys DROP COLUMN api_version');
  await knex.raw('ALTER TABLE tenants DROP COLUMN api_version');
}
