import type { Knex } from 'knex';

// Every tenant's count of the endpoints registered before counting began: a tenant made from now
// on gets its row when it is made, so registrations only ever update a row that exists.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'INSERT INTO webhook_endpoint_counts (tenant_id, endpoints) SELECT t.tenant_id, COUNT(e.webhook_endpoint_id) FROM tenants t LEFT JOIN webhook_endpoints e ON e.tenant_id = t.tenant_id GROUP BY t.tenant_id',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex('webhook_endpoint_counts').delete();
}
