/**
 * Leases: work that one instance at a time may do, claimed by conditional updates rather than
 * locks, so the claim holds on a cluster where a lock on one node does not block another (two
 * claims of the same row there conflict at commit, and one fails).
 */
import type { Knex } from 'knex';
import { isDuplicateKey, translatingErrors } from '../db/database-errors';
import { nowForDb, toDbTimestamp } from '../db/timestamps';
import type { Transaction } from '../db/transactions';

export interface Lease {
  name: string;
  /** Who holds it: one running instance. */
  holder: string;
  ttlMs: number;
}

const expiresAfter = (ttlMs: number) => toDbTimestamp(new Date(Date.now() + ttlMs).toISOString());

export function leasesRepository(knex: Knex) {
  return translatingErrors({
    /** Takes the lease if it is free or expired, or renews it if this holder has it; whether it is held now. */
    async claim({ name, holder, ttlMs }: Lease): Promise<boolean> {
      try {
        await knex('leases').insert({ name, holder, expires_at: expiresAfter(ttlMs) });
        return true;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
      const claimed = await knex('leases')
        .where('name', name)
        .andWhere((q) => q.where('holder', holder).orWhere('expires_at', '<', nowForDb()))
        .update({ holder, expires_at: expiresAfter(ttlMs) });
      return claimed > 0;
    },

    /**
     * Renews the lease inside a transaction that does the leased work, so the work commits only
     * while the lease is still this holder's; false when it has passed to another.
     */
    async renewWithin(trx: Transaction, { name, holder, ttlMs }: Lease): Promise<boolean> {
      const renewed = await trx('leases')
        .where({ name, holder })
        .where('expires_at', '>=', nowForDb())
        .update({ expires_at: expiresAfter(ttlMs) });
      return renewed > 0;
    },

    /** Lets the lease go at once, so another instance need not wait for it to expire. */
    async release({ name, holder }: Lease): Promise<void> {
      await knex('leases')
        .where({ name, holder })
        .update({ expires_at: toDbTimestamp(new Date(0).toISOString()) });
    },
  });
}
