import type { Knex } from 'knex';

// The feed (a tenant's events by sequence), served by a plain index: the unique one it replaces
// (removed next) made every unnumbered event of a tenant share one Galera certification key.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (table) => {
    table.index(['tenant_id', 'sequence'], 'events_feed');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (table) => {
    table.dropIndex(['tenant_id', 'sequence'], 'events_feed');
  });
}
