import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import { translatingErrors } from './database-errors';
import { nowForDb } from './timestamps';

interface Tenant {
  tenant_id: string;
  name: string;
}

export function tenantsRepository(knex: Knex) {
  return translatingErrors({
    /**
     * The tenant of that name, created on first use with its count of webhook endpoints: many
     * first registrations at once then update one row rather than race to insert it (on MySQL
     * such inserts deadlock on the gap they all locked).
     */
    async findOrCreate(name: string): Promise<Tenant> {
      const existing: Tenant | undefined = await knex('tenants')
        .first('tenant_id', 'name')
        .where('name', name);
      if (existing) return existing;
      const tenant = { tenant_id: uuidv7(), name };
      await knex.transaction(async (trx) => {
        await trx('tenants').insert({ ...tenant, created_at: nowForDb() });
        await trx('webhook_endpoint_counts').insert({ tenant_id: tenant.tenant_id, endpoints: 0 });
      });
      return tenant;
    },
  });
}
