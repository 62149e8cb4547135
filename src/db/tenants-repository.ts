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
    /** The tenant of that name, created on first use. */
    async findOrCreate(name: string, trx?: Knex.Transaction): Promise<Tenant> {
      const db = trx ?? knex;
      const existing: Tenant | undefined = await db('tenants').first('tenant_id', 'name').where('name', name);
      if (existing) return existing;
      const tenant = { tenant_id: uuidv7(), name };
      await db('tenants').insert({ ...tenant, created_at: nowForDb() });
      return tenant;
    },
  });
}
