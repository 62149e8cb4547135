/**
 * An endpoint's lease: one instance at a time makes an endpoint's deliveries, so its cap on
 * attempts in flight holds over every instance. The lease is a row of `leases`, taken, renewed and
 * released by conditional updates, READ COMMITTED by primary key. It is not a column of the
 * endpoint's row, which every attempt planned or written locks shared: writing that row every few
 * seconds would conflict with them on a Galera cluster.
 */
import type { Knex } from 'knex';
import { isDuplicateKey } from '../db/database-errors';
import { fromDbTimestamp, nowForDb, toDbTimestamp, type DbTimestamp } from '../db/timestamps';
import { inTransaction } from '../db/transactions';
import { notPaused } from './tenant-pauses';

/** The endpoint's lease's name in `leases` (stored: its text stays as it is). */
const leasePrefix = 'webhook-serving:';
const leaseName = (endpointId: string) => leasePrefix + endpointId;

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

  /** Of these endpoints, those enabled (and not paused) whose lease `held` has. */
  const heldAndEnabled = async (endpointIds: string[], held: Set<string>): Promise<Set<string>> => {
    const enabled = new Set<string>(
      await knex('webhook_endpoints')
        .whereIn('webhook_endpoint_id', endpointIds)
        .where('enabled', true)
        .modify(notPaused('webhook_endpoints.tenant_id'))
        .pluck('webhook_endpoint_id'),
    );
    return new Set(endpointIds.filter((id) => enabled.has(id) && held.has(leaseName(id))));
  };

  /** The lease's name computed from an endpoint's id column, for a join (`||` joins strings in SQLite, `concat` in MySQL). */
  const leaseNameOf = (column: string) =>
    knex.client.config.client === 'mysql2'
      ? knex.raw('concat(?, ??)', [leasePrefix, column])
      : knex.raw('(? || ??)', [leasePrefix, column]);

  return {
    /**
     * Takes or renews the leases of these endpoints for `holder` where it lacks one or a third of
     * it has passed (of two instances or Galera nodes at once, one gets it); a lease that ran out
     * more than `graceMs` ago is taken over. The endpoints' rows and their leases are read in one
     * statement; a lease is written only when it is taken or due for renewal. `knownUntil` gives,
     * for endpoints whose lease `holder` wrote, when it runs out: one with two thirds of it left
     * needs no renewal, and is not read either. Answers, for each endpoint whose lease `holder`
     * has now, when it runs out at the soonest (epoch ms); those another holder has, or disabled or
     * gone, are not in it.
     */
    async take(
      endpointIds: string[],
      holder: string,
      { endpointLeaseMs, graceMs }: { endpointLeaseMs: number; graceMs: number },
      knownUntil: ReadonlyMap<string, number> = new Map(),
    ): Promise<Map<string, number>> {
      const held = new Map<string, number>();
      const takenAt = Date.now();
      const fresh = (until: number) => until - takenAt >= (endpointLeaseMs * 2) / 3;
      const unknown = endpointIds.filter((id) => {
        const until = knownUntil.get(id);
        if (until === undefined || !fresh(until)) return true;
        held.set(id, until);
        return false;
      });
      if (unknown.length === 0) return held;
      // A disabled or deleted endpoint's lease is not taken, nor one of a paused tenant.
      const rows: Array<{
        webhook_endpoint_id: string;
        holder: string | null;
        expires_at: DbTimestamp | null;
      }> = await knex('webhook_endpoints as e')
        .leftJoin('leases as l', 'l.name', leaseNameOf('e.webhook_endpoint_id'))
        .select('e.webhook_endpoint_id', 'l.holder', 'l.expires_at')
        .whereIn('e.webhook_endpoint_id', unknown)
        .where('e.enabled', true)
        .modify(notPaused('e.tenant_id'));
      for (const row of rows) {
        const name = leaseName(row.webhook_endpoint_id);
        // Written by this holder, on its own clock.
        const until = row.holder === holder ? Date.parse(fromDbTimestamp(row.expires_at!)) : NaN;
        if (fresh(until)) {
          held.set(row.webhook_endpoint_id, until);
          continue;
        }
        const taken =
          row.holder === null
            ? await insertLease(name, holder, fromNow(endpointLeaseMs))
            : await takeLease(name, holder, fromNow(endpointLeaseMs), fromNow(-graceMs));
        if (taken) held.set(row.webhook_endpoint_id, takenAt + endpointLeaseMs);
      }
      return held;
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
    /**
     * Gives back everything `holder` held, at once: a delivery thread that died leaves its claims
     * and leases to this, rather than to their running out. The attempts of its endpoints that are
     * still claimed are due again (its connections died with it, so none is still being made),
     * then its leases go; another holder takes an endpoint only after this.
     */
    async releaseHolder(holder: string): Promise<number> {
      const names: string[] = await knex('leases')
        .where('holder', holder)
        .where('name', 'like', `${leasePrefix}%`)
        .pluck('name');
      if (names.length === 0) return 0;
      const endpointIds = names.map((name) => name.slice(leasePrefix.length));
      return inTransaction(
        knex,
        'webhook-release',
        async ({ trx }) => {
          const released = await trx('webhook_deliveries')
            .whereIn('webhook_endpoint_id', endpointIds)
            .where('status', 'pending')
            .whereNotNull('claimed_by')
            .update({ claimed_by: null, lease_until: null });
          await trx('leases').whereIn('name', names).where('holder', holder).delete();
          return released;
        },
        readCommitted,
      );
    },

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
