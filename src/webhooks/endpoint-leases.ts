/**
 * Serving a webhook endpoint: one instance at a time makes an endpoint's deliveries, so that its
 * cap on attempts in flight holds over every instance. Serving is a lease named for the endpoint
 * in `leases`, taken, renewed and given up by conditional updates (no row lock is relied on), each
 * READ COMMITTED by primary key. It is kept apart from the endpoint's row: that row is the parent
 * of every attempt (a foreign key), and each attempt planned or written locks it shared, so
 * writing it every few seconds would abort plannings and outcomes on the other nodes of a Galera
 * cluster, or be aborted by them.
 */
import type { Knex } from 'knex';
import { isDuplicateKey } from '../db/database-errors';
import { nowForDb, toDbTimestamp, type DbTimestamp } from '../db/timestamps';
import { inTransaction } from '../db/transactions';

/** The lease an instance holds while it serves the endpoint. */
const servingLease = (endpointId: string) => `webhook-serving:${endpointId}`;

const readCommitted = { readCommitted: true };

/** The database time `offsetMs` from now. */
const fromNow = (offsetMs: number) => toDbTimestamp(new Date(Date.now() + offsetMs).toISOString());

export type EndpointServing = ReturnType<typeof endpointServing>;

/** Not wrapped in translatingErrors: the repositories that use it are. */
export function endpointServing(knex: Knex) {
  /** Serving for the first time since the lease was removed: of two at once, one inserts it. */
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

  /** Serves on, or takes over from a holder whose time ran out before `expiredBefore`: a conditional update. */
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

  /** Of these endpoints, those `holder` may serve now that `enabled` says are enabled. */
  const heldAndEnabled = async (endpointIds: string[], held: Set<string>): Promise<Set<string>> => {
    const enabled = new Set<string>(
      await knex('webhook_endpoints')
        .whereIn('webhook_endpoint_id', endpointIds)
        .where('enabled', true)
        .pluck('webhook_endpoint_id'),
    );
    return new Set(endpointIds.filter((id) => enabled.has(id) && held.has(servingLease(id))));
  };

  return {
    /**
     * Makes sure `holder` serves the endpoint: when it does not, or a third of its time has passed,
     * the endpoint is served by `holder` for `serveMs` more (of two instances at once, or two nodes
     * of a cluster, where locks do not reach, one gets it); a holder whose time ran out more than
     * `graceMs` ago is taken over. Answers until when it is served at the soonest (epoch
     * milliseconds), or undefined when another holder serves it.
     */
    async serve(
      endpointId: string,
      holder: string,
      { serveMs, graceMs }: { serveMs: number; graceMs: number },
    ): Promise<number | undefined> {
      const servingFrom = Date.now();
      const name = servingLease(endpointId);
      const serving: { holder: string; expires_at: DbTimestamp } | undefined = await knex('leases')
        .first('holder', 'expires_at')
        .where('name', name);
      if (serving?.holder === holder && serving.expires_at >= fromNow((serveMs * 2) / 3))
        return servingFrom + (serveMs * 2) / 3;
      const taken =
        serving === undefined
          ? await insertLease(name, holder, fromNow(serveMs))
          : await takeLease(name, holder, fromNow(serveMs), fromNow(-graceMs));
      return taken ? servingFrom + serveMs : undefined;
    },

    /** Of these endpoints, those another holder than `holder` serves, or served less than `graceMs` ago. */
    async servedByOthers(
      endpointIds: string[],
      holder: string,
      graceMs: number,
    ): Promise<Set<string>> {
      if (endpointIds.length === 0) return new Set();
      const names: string[] = await knex('leases')
        .whereIn('name', endpointIds.map(servingLease))
        .whereNot('holder', holder)
        .where('expires_at', '>=', fromNow(-graceMs))
        .pluck('name');
      const others = new Set(names);
      return new Set(endpointIds.filter((id) => others.has(servingLease(id))));
    },

    /** Of these endpoints, those still enabled and served by `holder` (not disabled, deleted or taken over). */
    async stillServed(endpointIds: string[], holder: string): Promise<Set<string>> {
      if (endpointIds.length === 0) return new Set();
      const held = new Set<string>(
        await knex('leases')
          .whereIn('name', endpointIds.map(servingLease))
          .where('holder', holder)
          .pluck('name'),
      );
      return heldAndEnabled(endpointIds, held);
    },

    /**
     * Serves these endpoints `serveMs` more, in one statement, where `holder` still does; answers
     * those it still serves and that are enabled (a conditional update, then reads of what it
     * wrote, in one transaction: no row lock is relied on).
     */
    async keepServing(
      endpointIds: string[],
      holder: string,
      serveMs: number,
    ): Promise<Set<string>> {
      if (endpointIds.length === 0) return new Set();
      const names = endpointIds.map(servingLease);
      const renewed = await inTransaction(
        knex,
        'webhook-serving',
        async ({ trx }) => {
          const ours = () =>
            trx('leases')
              .whereIn('name', names)
              .where('holder', holder)
              .where('expires_at', '>=', nowForDb());
          await ours().update({ expires_at: fromNow(serveMs) });
          return new Set<string>(await ours().pluck('name'));
        },
        readCommitted,
      );
      return heldAndEnabled(endpointIds, renewed);
    },

    /** Stops serving these endpoints at once (the instance is stopping), for another instance to take over. */
    async stopServing(endpointIds: string[], holder: string): Promise<void> {
      if (endpointIds.length === 0) return;
      await inTransaction(
        knex,
        'webhook-serving',
        ({ trx }) =>
          trx('leases')
            .whereIn('name', endpointIds.map(servingLease))
            .where('holder', holder)
            .delete(),
        readCommitted,
      );
    },
  };
}
