/**
 * Numbers events after their changes commit: each tenant's events get 1, 2, 3, … in the order
 * the numbering finds them committed, so a number once given is never passed by a later one.
 * One instance numbers at a time, holding a lease that it renews in each numbering transaction;
 * the others try for the lease now and then, and one takes over when the holder stops renewing.
 * This is when numbering runs; what one numbering transaction does is numbering-protocol.ts.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { repeatCycle } from '../background/repeating-cycle';
import type { Lease } from './leases-repository';
import type { EventRepositories } from './repositories';
import type { EventMetrics } from './metrics';
import { batchSize, numberPending } from './numbering-protocol';

/** How long the lease lasts without renewal: another instance takes over this long after a holder dies. */
const leaseTtlMs = 3000;
/** The holder renews the lease when a third of it has passed, whether or not it has numbered anything. */
const renewAfterMs = leaseTtlMs / 3;
/** How often the holder looks for events that other instances wrote (its own it is told of). */
const holderPollMs = 100;
/**
 * How long numbering waits after hearing of a commit here, so that the events of the commits
 * close behind it are numbered in the same transaction rather than one transaction each. At the
 * peak numbering runs back to back, and this wait comes between each transaction and the next.
 */
const gatherMs = 5;
/** How often an instance without the lease tries for it. */
const standbyPollMs = 1000;

export interface EventNumbering {
  /** Says that events were just committed here: number them now rather than at the next poll. */
  poke(): void;
  stop(): Promise<void>;
}

export function startEventNumbering(
  repositories: EventRepositories,
  options: {
    logger: Logger;
    metrics: EventMetrics;
    onNumbered: (lastSequences: Map<string, number>) => void;
    /** Hears that this instance has taken the lease (what a holder before it left undone is its now). */
    onLeaseTaken?: () => void;
  },
): EventNumbering {
  const { logger, metrics, onNumbered, onLeaseTaken } = options;
  const lease: Lease = { name: 'event-numbering', holder: randomUUID(), ttlMs: leaseTtlMs };
  let holding = false;
  let renewedAt = 0;
  let stopping = false;
  /** A commit here was heard of since the last numbering began: events surely wait. */
  let committed = false;

  /** Takes note that the lease was gained or lost: its log line and metrics. */
  const leaseHeld = (now: boolean, why: string) => {
    if (now === holding) return;
    holding = now;
    metrics.lease(now);
    logger.info(
      { holder: lease.holder, lease: lease.name },
      now
        ? 'event numbering lease gained: this instance numbers events'
        : `event numbering lease lost: ${why}`,
    );
  };

  const numberAll = async () => {
    let expected = committed;
    for (;;) {
      committed = false;
      const result = await numberPending(repositories, lease, batchSize, expected);
      if (result === undefined) return leaseHeld(false, 'another instance took it over');
      if (result.numbered > 0) {
        metrics.numbered(result.createdAtMs);
        onNumbered(result.lastSequences);
      }
      if (!result.moreMayWait || stopping) return;
      expected = true;
    }
  };

  const cycle = async () => {
    try {
      if (!holding || Date.now() - renewedAt > renewAfterMs) {
        const held = holding;
        leaseHeld(await repositories.leases.claim(lease), 'another instance took it over');
        renewedAt = Date.now();
        if (holding && !held) onLeaseTaken?.();
      }
      if (holding) await numberAll();
    } catch (error) {
      logger.warn({ err: error }, 'numbering events failed; trying again shortly');
    }
  };

  const cycles = repeatCycle(cycle, {
    gatherMs,
    pollMs: () => (holding ? holderPollMs : standbyPollMs),
  });

  return {
    poke() {
      if (!holding) return;
      committed = true;
      cycles.soon();
    },
    async stop() {
      stopping = true;
      await cycles.stop();
      if (!holding) return;
      // What this instance committed last is numbered now, not when another takes the lease over.
      await cycle();
      await repositories.leases.release(lease).catch(() => {});
      leaseHeld(false, 'this instance let it go, stopping');
    },
  };
}
