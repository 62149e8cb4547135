import type { Knex } from 'knex';

/*
 * No unique index on (tenant_id, sequence). On Galera a unique key is a certification key for
 * every row whose key is not entirely NULL: (tenant, NULL) is one key, so every unnumbered event
 * of a tenant shared it, and any two changes of one tenant committed through different nodes at
 * once conflicted (one in ten creates with two instances under load, each run again). A number
 * given twice is refused without it: every numbering transaction moves the tenant's
 * event_sequences row on from the value it read, conditionally, and two that read the same value
 * cannot both commit (a lock on one server, certification on a cluster).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (table) => {
    table.dropUnique(['tenant_id', 'sequence'], 'events_tenant_sequence');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (table) => {
    table.unique(['tenant_id', 'sequence'], { indexName: 'events_tenant_sequence' });
  });
}
