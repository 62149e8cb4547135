import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import { newestVersion, type ApiVersion } from '../versions/versions';
import { translatingErrors } from './database-errors';
import { nowForDb } from './timestamps';

interface Tenant {
  tenant_id: string;
  name: string;
  api_version: ApiVersion;
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
        .first('tenant_id', 'name', 'api_version')
        .where('name', name);
      if (existing) return existing;
      // Pinned to the newest version, as a Stripe account is to the version it started on.
      const tenant = { tenant_id: uuidv7(), name, api_version: newestVersion };
      await knex.transaction(async (trx) => {
        await trx('tenants').insert({ ...tenant, created_at: nowForDb() });
        await trx('webhook_endpoint_counts').insert({ tenant_id: tenant.tenant_id, endpoints: 0 });
      });
      return tenant;
    },

    /**
     * Moves the tenant to another version, with every key of its own that no operator pinned
     * otherwise; answers whether the tenant exists.
     */
    async setApiVersion(name: string, apiVersion: ApiVersion): Promise<boolean> {
      return knex.transaction(async (trx) => {
        const tenant: { tenant_id: string } | undefined = await trx('tenants')
          .first('tenant_id')
          .where('name', name);
        if (!tenant) return false;
        await trx('tenants')
          .update({ api_version: apiVersion })
          .where('tenant_id', tenant.tenant_id);
        await trx('api_keys')
          .update({ api_version: apiVersion })
          .where({ tenant_id: tenant.tenant_id, api_version_pinned: false });
        return true;
      });
    },
  });
}
