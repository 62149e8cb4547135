import type { Knex } from 'knex';

// Events numbered before planning had a table of its own had their deliveries planned in their
// numbering transaction: every tenant starts planned up to its last sequence.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'insert into webhook_planning (tenant_id, planned_sequence) select tenant_id, last_sequence from event_sequences',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex('webhook_planning').delete();
}
