/**
 * A tenant's places for bulk changes running at once, kept in the database so that every
 * instance counts the same ones: each place is a row of `leases` (`bulk:<tenant>:<n>`) that one
 * call takes with a conditional write and gives back when it ends. Taking never waits on a lock,
 * and holds on a cluster, where two nodes writing the same row conflict and one fails. A call
 * whose instance dies keeps its place until the lease expires.
 */
import type { Knex } from 'knex';
import { isDuplicateKey, isWriteConflict, translatingErrors } from './database-errors';
import { nowForDb, toDbTimestamp } from './timestamps';

const nameOf = (tenantId: string, place: number) => `bulk:${tenantId}:${place}`;
const expiresAfter = (ttlMs: number) => toDbTimestamp(new Date(Date.now() + ttlMs).toISOString());

export function bulkSlotsRepository(knex: Knex) {
  /** Takes the place if it is free (never taken, given back or expired); whether it is this holder's now. */
  async function takePlace(name: string, holder: string, ttlMs: number): Promise<boolean> {
    try {
      await knex('leases').insert({ name, holder, expires_at: expiresAfter(ttlMs) });
      return true;
    } catch (error) {
      // Another took it first (on a cluster, another node: a conflict rather than a duplicate).
      if (isWriteConflict(error)) return false;
      if (!isDuplicateKey(error)) throw error;
    }
    try {
      const taken = await knex('leases')
        .where('name', name)
        .andWhere('expires_at', '<', nowForDb())
        .update({ holder, expires_at: expiresAfter(ttlMs) });
      return taken > 0;
    } catch (error) {
      if (isWriteConflict(error)) return false;
      throw error;
    }
  }

  return translatingErrors({
    /** Takes the first free of the tenant's `places`; its number, or undefined when all are held. */
    async take(
      tenantId: string,
      places: number,
      holder: string,
      ttlMs: number,
    ): Promise<number | undefined> {
      for (let place = 1; place <= places; place++)
        if (await takePlace(nameOf(tenantId, place), holder, ttlMs)) return place;
      return undefined;
    },

    /** Gives the place back at once, if this holder still has it. */
    async giveBack(tenantId: string, place: number, holder: string): Promise<void> {
      await knex('leases')
        .where({ name: nameOf(tenantId, place), holder })
        .update({ expires_at: toDbTimestamp(new Date(0).toISOString()) });
    },
  });
}
