/**
 * Numbers events after their changes commit: each tenant's events get 1, 2, 3, … in the order
 * the numbering finds them committed, so a number once given is never passed by a later one.
 * One instance numbers at a time, holding a lease that it renews in each numbering transaction;
 * the others try for the lease now and then, and one takes over when the holder stops renewing.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Lease } from '../db/leases-repository';
import type { Repositories } from '../db/repositories';

/** How long the lease lasts without renewal: another instance takes over this long after a holder dies. */
const leaseTtlMs = 3000;
/** How often the holder looks for events that other instances wrote (its own it is told of). */
const holderPollMs = 50;
/** How often an instance without the lease tries for it. */
const standbyPollMs = 1000;
/** Events numbered in one transaction. */
const batchSize = 500;

export interface EventNumbering {
  /** Says that events were just committed here: number them now rather than at the next poll. */
  poke(): void;
  stop(): Promise<void>;
}

export function startEventNumbering(
  repositories: Repositories,
  options: { logger: Logger; onNumbered: (lastSequences: Map<string, number>) => void },
): EventNumbering {
  const { logger, onNumbered } = options;
  const lease: Lease = { name: 'event-numbering', holder: randomUUID(), ttlMs: leaseTtlMs };
  let holding = false;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;

  const numberAll = async () => {
    for (;;) {
      const result = await repositories.events.numberPending(lease, repositories.leases.renewWithin, batchSize);
      if (result === undefined) {
        holding = false;
        logger.info({ holder: lease.holder }, 'the event numbering lease passed to another instance');
        return;
      }
      if (result.numbered > 0) onNumbered(result.lastSequences);
      if (result.numbered < batchSize || stopping) return;
    }
  };

  const cycle = async () => {
    try {
      if (!holding) {
        holding = await repositories.leases.claim(lease);
        if (holding) logger.info({ holder: lease.holder }, 'this instance numbers events');
      }
      if (holding) await numberAll();
    } catch (error) {
      logger.warn({ err: error }, 'numbering events failed; trying again shortly');
    }
  };

  const run = () => {
    if (stopping) return;
    if (running) {
      again = true;
      return;
    }
    clearTimeout(timer);
    running = cycle().finally(() => {
      running = undefined;
      if (again) {
        again = false;
        run();
      } else if (!stopping) {
        timer = setTimeout(run, holding ? holderPollMs : standbyPollMs);
      }
    });
  };
  run();

  return {
    poke() {
      if (holding) run();
    },
    async stop() {
      stopping = true;
      clearTimeout(timer);
      await running;
      if (holding) await repositories.leases.release(lease).catch(() => {});
    },
  };
}
