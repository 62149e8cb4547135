/**
 * One numbering transaction: how committed events that wait for their numbers get their places
 * in their tenants' feeds. It renews the numbering lease first, so it commits only while this
 * holder has the lease; then it takes the events oldest written first, a batch at a time, and
 * gives each tenant's events its next sequences in that order.
 *
 * Every write in it is conditional (the events still unnumbered, each tenant's last sequence
 * still the one read), so of two numberings that read the same state only one commits, wherever
 * they run: the other finds its rows changed (on one server, behind the first's locks) or fails
 * certification (Galera), and runs again from its reads. The SQL is the events repository's.
 */
import { WriteConflictError } from '../db/database-errors';
import type { PendingEvent } from './events-repository';
import type { Lease } from './leases-repository';
import type { EventRepositories } from './repositories';
import { fromDbTimestamp } from '../db/timestamps';

/** Events numbered in one transaction. */
export const batchSize = 500;

export interface Numbered {
  numbered: number;
  /** Each numbered tenant's new last sequence. */
  lastSequences: Map<string, number>;
  /** When each numbered event was written, for the numbering's lag. */
  createdAtMs: number[];
  /** A full batch was numbered: more may wait, to be numbered at once rather than at the next look. */
  moreMayWait: boolean;
}

/** What the numbering needs of the repositories. */
export interface NumberingRepositories {
  events: Pick<
    EventRepositories['events'],
    | 'anyAwaitingNumber'
    | 'numbering'
    | 'oldestAwaitingNumber'
    | 'lastSequences'
    | 'setSequences'
    | 'moveLastSequence'
  >;
  leases: Pick<EventRepositories['leases'], 'renewWithin'>;
}

/**
 * The sequences of events found waiting, in the order found: each tenant's go on one after
 * another from its last sequence (from 1 for a tenant with none yet). Also the new last sequence
 * of each of their tenants, in the order their last sequences were read, then the new tenants.
 */
export function sequencesFor(
  pending: ReadonlyArray<Pick<PendingEvent, 'event_id' | 'tenant_id'>>,
  lastSequences: ReadonlyMap<string, number>,
): { sequences: Array<[eventId: string, sequence: number]>; last: Map<string, number> } {
  const tenants = new Set(pending.map((event) => event.tenant_id));
  const last = new Map([...lastSequences].filter(([tenantId]) => tenants.has(tenantId)));
  const sequences = pending.map((event): [string, number] => {
    const sequence = (last.get(event.tenant_id) ?? 0) + 1;
    last.set(event.tenant_id, sequence);
    return [event.event_id, sequence];
  });
  return { sequences, last };
}

const nothingNumbered = (): Numbered => ({
  numbered: 0,
  lastSequences: new Map(),
  createdAtMs: [],
  moreMayWait: false,
});

/**
 * Numbers up to `batch` committed events that wait for their numbers, in one transaction that
 * also renews the lease. Undefined when the lease has passed to another holder. `expected`:
 * events are known to wait (a commit was just heard of, or the last batch was full).
 */
export async function numberPending(
  { events, leases }: NumberingRepositories,
  lease: Lease,
  batch = batchSize,
  expected = false,
): Promise<Numbered | undefined> {
  // Most polls find nothing: that costs one read, not a transaction.
  if (!expected && !(await events.anyAwaitingNumber())) return nothingNumbered();
  return events.numbering(async (trx) => {
    if (!(await leases.renewWithin(trx, lease))) return undefined;
    const pending = await events.oldestAwaitingNumber(trx, batch);
    if (pending.length === 0) return nothingNumbered();
    const before = await events.lastSequences(
      [...new Set(pending.map((event) => event.tenant_id))],
      trx,
    );
    const { sequences, last } = sequencesFor(pending, before);
    if ((await events.setSequences(trx, sequences)) !== sequences.length)
      throw new WriteConflictError();
    for (const [tenantId, sequence] of last)
      if (!(await events.moveLastSequence(trx, tenantId, before.get(tenantId), sequence)))
        throw new WriteConflictError();
    return {
      numbered: sequences.length,
      lastSequences: last,
      createdAtMs: pending.map((event) => Date.parse(fromDbTimestamp(event.created_at))),
      moreMayWait: sequences.length === batch,
    };
  });
}
