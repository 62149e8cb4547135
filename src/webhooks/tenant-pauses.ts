/**
 * Tenants whose webhook deliveries are paused: their endpoints stay enabled and their attempts
 * wait in the database, claimed by no instance, until an operator resumes them
 * (`npm run -s webhooks -- resume --tenant NAME`). A delivery thread that died three times in a
 * row while one tenant held the most of its pending work pauses that tenant (delivery-thread.ts).
 */
import type { Knex } from 'knex';
import { translatingErrors } from '../db/database-errors';
import { fromDbTimestamp, nowForDb, type DbTimestamp } from '../db/timestamps';

export interface PausedTenant {
  tenantId: string;
  name: string;
  pausedAt: string;
  reason: string;
}

/** For a query over endpoints: only those of tenants not paused (`column` names the endpoint's tenant). */
export const notPaused = (column: string) => (q: Knex.QueryBuilder) =>
  q.whereNotExists((sub) =>
    sub
      .select(sub.client.raw('1'))
      .from('webhook_pauses as p')
      .whereRaw('p.tenant_id = ??', [column]),
  );

export type TenantPauses = ReturnType<typeof tenantPauses>;

export function tenantPauses(knex: Knex) {
  return translatingErrors({
    /** Pauses the tenant's deliveries; a tenant already paused keeps its first reason. */
    async pause(tenantId: string, reason: string): Promise<void> {
      await knex('webhook_pauses')
        .insert({ tenant_id: tenantId, paused_at: nowForDb(), reason: reason.slice(0, 500) })
        .onConflict('tenant_id')
        .ignore();
    },

    /** Resumes the named tenant's deliveries; answers whether it was paused. */
    async resume(tenantName: string): Promise<boolean> {
      const ids = knex('tenants').select('tenant_id').where('name', tenantName);
      return (await knex('webhook_pauses').whereIn('tenant_id', ids).delete()) > 0;
    },

    async list(): Promise<PausedTenant[]> {
      const rows: Array<{
        tenant_id: string;
        name: string;
        paused_at: DbTimestamp;
        reason: string;
      }> = await knex('webhook_pauses as p')
        .join('tenants as t', 't.tenant_id', 'p.tenant_id')
        .select('p.tenant_id', 't.name', 'p.paused_at', 'p.reason')
        .orderBy('p.paused_at');
      return rows.map((row) => ({
        tenantId: row.tenant_id,
        name: row.name,
        pausedAt: fromDbTimestamp(row.paused_at),
        reason: row.reason,
      }));
    },

    async count(): Promise<number> {
      const row = await knex('webhook_pauses').count({ count: '*' }).first();
      return Number(row?.count ?? 0);
    },
  });
}
