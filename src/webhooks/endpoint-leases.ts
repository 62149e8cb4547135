/**
 * An endpoint's lease: one instance at a time makes an endpoint's deliveries, so its cap on
 * attempts in flight holds over every instance. The lease is a row of `leases`, taken, renewed and
 * released by conditional updates, READ COMMITTED by primary key. It is not a column of the
 * endpoint's row, which every attempt planned or written locks shared: writing that row every few
 * seconds would conflict with them on a Galera cluster.
 */
import type { Knex } from 'knex';
import { isDuplicateKey } from '../db/database-errors';
import { nowForDb, toDbTimestamp, type DbTimestamp } from '../db/timestamps';
import { inTransaction } from '../db/transactions';

/** The endpoint's lease's name in `leases` (stored: its text stays as it is). */
const leaseName = (endpointId: string) => `webhook-serving:${endpointId}`;

const readCommitted = { readCommitted: true };

/** The database time `offsetMs` from now. */
const fromNow = (offsetMs: number) => toDbTimestamp(new Date(Date.now() + offsetMs).toISOString());

export type EndpointLeases = ReturnType<typeof endpointLeases>;

/** Not wrapped in translatingErrors: the repositories that use it are. */
export function endpointLeases(knex: Knex) {
  /** The first lease since it was released: of two at once, one inserts it. */
  const insertLease = async (name: string, holder: string, expiresAt: DbTimestamp) => {
    try {
      await inTransaction(
        knex,
        'webhook-serving',
        ({ trx }) => trx('leases').insert({ name, holder, expires_at: expiresAt }),
        readCommitted,
      );
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  };

  /** Renews the lease, or takes it over from a holder whose lease ran out before `expiredBefore`: a conditional update. */
  const takeLease = async (
    name: string,
    holder: string,
    expiresAt: DbTimestamp,
    expiredBefore: DbTimestamp,
  ) =>
    (await inTransaction(
      knex,
      'webhook-serving',
      ({ trx }) =>
        trx('leases')
          .where('name', name)
          .where((q) => q.where('holder', holder).orWhere('expires_at', '<', expiredBefore))
          .update({ holder, expires_at: expiresAt }),
      readCommitted,
    )) > 0;

  /** Of these endpoints, those enabled whose lease `held` has. */
  const heldAndEnabled = async (endpointIds: string[], held: Set<string>): Promise<Set<string>> => {
    const enabled = new Set<string>(
      await knex('webhook_endpoints')
        .whereIn('webhook_endpoint_id', endpointIds)
        .where('enabled', true)
        .pluck('webhook_endpoint_id'),
    );
    return new Set(endpointIds.filter((id) => enabled.has(id) && held.has(leaseName(id))));
  };

  return {
    /**
     * Takes or renews the endpoint's lease for `holder` when it lacks it or a third of it has
     * passed (of two instances or Galera nodes at once, one gets it); a lease that ran out more
     * than `graceMs` ago is taken over. Answers when it runs out at the soonest (epoch ms), or
     * undefined when another holder has it or the endpoint is disabled or gone.
     */
    async take(
      endpointId: string,
      holder: string,
      { endpointLeaseMs, graceMs }: { endpointLeaseMs: number; graceMs: number },
    ): Promise<number | undefined> {
      const takenAt = Date.now();
      const name = leaseName(endpointId);
      // The endpoint's row and its lease's in one read: a disabled or deleted endpoint's is not taken.
      const row: { holder: string | null; expires_at: DbTimestamp | null } | undefined = await knex(
        'webhook_endpoints as e',
      )
        .leftJoin('leases as l', 'l.name', knex.raw('?', [name]))
        .first('l.holder', 'l.expires_at')
        .where({ 'e.webhook_endpoint_id': endpointId, 'e.enabled': true });
      if (row === undefined) return undefined;
      const lease =
        row.holder === null ? undefined : { holder: row.holder, expires_at: row.expires_at! };
      if (lease?.holder === holder && lease.expires_at >= fromNow((endpointLeaseMs * 2) / 3))
        return takenAt + (endpointLeaseMs * 2) / 3;
      const taken =
        lease === undefined
          ? await insertLease(name, holder, fromNow(endpointLeaseMs))
          : await takeLease(name, holder, fromNow(endpointLeaseMs), fromNow(-graceMs));
      return taken ? takenAt + endpointLeaseMs : undefined;
    },

    /** Of these endpoints, those whose lease another holder has, or had less than `graceMs` ago. */
    async leasedByOthers(
      endpointIds: string[],
      holder: string,
      graceMs: number,
    ): Promise<Set<string>> {
      if (endpointIds.length === 0) return new Set();
      const names: string[] = await knex('leases')
        .whereIn('name', endpointIds.map(leaseName))
        .whereNot('holder', holder)
        .where('expires_at', '>=', fromNow(-graceMs))
        .pluck('name');
      const others = new Set(names);
      return new Set(endpointIds.filter((id) => others.has(leaseName(id))));
    },

    /** Of these endpoints, those still enabled and leased by `holder` (not disabled, deleted or taken over). */
    async stillLeased(endpointIds: string[], holder: string): Promise<Set<string>> {
      if (endpointIds.length === 0) return new Set();
      const held = new Set<string>(
        await knex('leases')
          .whereIn('name', endpointIds.map(leaseName))
          .where('holder', holder)
          .pluck('name'),
      );
      return heldAndEnabled(endpointIds, held);
    },

    /**
     * Renews `holder`'s leases of these endpoints, in one statement; answers those it still holds
     * and that are enabled (a conditional update, then a read of what it wrote, in one transaction).
     */
    async renewLeases(
      endpointIds: string[],
      holder: string,
      endpointLeaseMs: number,
    ): Promise<Set<string>> {
      if (endpointIds.length === 0) return new Set();
      const names = endpointIds.map(leaseName);
      const renewed = await inTransaction(
        knex,
        'webhook-serving',
        async ({ trx }) => {
          const ours = () =>
            trx('leases')
              .whereIn('name', names)
              .where('holder', holder)
              .where('expires_at', '>=', nowForDb());
          await ours().update({ expires_at: fromNow(endpointLeaseMs) });
          return new Set<string>(await ours().pluck('name'));
        },
        readCommitted,
      );
      return heldAndEnabled(endpointIds, renewed);
    },

    /** Releases these endpoints' leases at once (the instance is stopping), for another instance to take over. */
    async releaseLeases(endpointIds: string[], holder: string): Promise<void> {
      if (endpointIds.length === 0) return;
      await inTransaction(
        knex,
        'webhook-serving',
        ({ trx }) =>
          trx('leases')
            .whereIn('name', endpointIds.map(leaseName))
            .where('holder', holder)
            .delete(),
        readCommitted,
      );
    },
  };
}
