import type { Knex } from 'knex';

// Tenants whose webhook deliveries an instance paused (src/webhooks/tenant-pauses.ts): their
// attempts wait, unclaimed, until an operator resumes them.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_pauses', (table) => {
    table.specificType('tenant_id', 'char(36)').primary();
    table.datetime('paused_at', { precision: 3 }).notNullable();
    table.string('reason', 500).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_pauses');
}
