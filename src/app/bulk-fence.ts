/**
 * How many bulk changes run at once. A tenant runs at most 2, on all instances together: what the
 * bound protects is the database they share (each holds up to 1,000 rows locked and a connection
 * while it runs), so the places are counted there (db/bulk-slots.ts), not per instance, where N
 * instances would let a tenant run 2N. An instance also runs at most BULK_CHANGES_PER_INSTANCE
 * of them over all tenants, counted in its memory: that bound protects its own pool and memory.
 * Past either, the call is refused at once (429), never queued.
 */
import { v7 as uuidv7 } from 'uuid';
import type { bulkSlotsRepository } from '../db/bulk-slots';
import { ProblemError } from '../errors';

/** The most bulk changes one tenant runs at once (contract-decisions: "Bulk changes"). */
export const bulkChangesPerTenant = 2;
/**
 * How long a place outlives a call whose instance died without giving it back: well past the
 * longest a bulk change runs (a few statements, each bounded by the statement timeout).
 */
const placeTtlMs = 120_000;
/** What a refusal asks the client to wait: a bulk change takes a second or two. */
const retryAfterSeconds = 1;

/** Gives back what a call held, once, whatever happens to it. */
export type Release = () => Promise<void>;

export interface BulkFence {
  /** Takes a place for one bulk change of the tenant; a 429 problem when there is none. */
  enter(tenantId: string): Promise<Release>;
}

const busy = (detail: string) =>
  new ProblemError('rate-limited', detail, {
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });

export function bulkFence(
  slots: Pick<ReturnType<typeof bulkSlotsRepository>, 'take' | 'giveBack'>,
  perInstance: number,
): BulkFence {
  let running = 0;
  return {
    async enter(tenantId) {
      if (running >= perInstance)
        throw busy(
          `This instance is running ${running} bulk changes, the most it runs at once; retry after ${retryAfterSeconds} second.`,
        );
      running++;
      const holder = uuidv7();
      let place: number | undefined;
      try {
        place = await slots.take(tenantId, bulkChangesPerTenant, holder, placeTtlMs);
      } finally {
        if (place === undefined) running--;
      }
      if (place === undefined)
        throw busy(
          `This tenant is running ${bulkChangesPerTenant} bulk changes, the most it may run at once; retry after ${retryAfterSeconds} second.`,
        );
      let released = false;
      const taken = place;
      return async () => {
        if (released) return;
        released = true;
        running--;
        // A place not given back (the database away) frees itself when its lease expires.
        await slots.giveBack(tenantId, taken, holder).catch(() => {});
      };
    },
  };
}
