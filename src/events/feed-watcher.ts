/**
 * Wakes long-polling feed requests when their tenant's events are numbered, on this instance or
 * any other. One watcher per instance: it hears at once of what this instance numbers, and while
 * anyone waits it reads the waiting tenants' last sequences every 100 ms, in one query, so
 * waiting requests neither poll the database nor hold a connection.
 */
import type { Logger } from 'pino';
import type { Repositories } from '../db/repositories';

interface Waiter {
  /** Wakes when the tenant's last sequence passes this. */
  after: number;
  wake(numbered: boolean): void;
}

export interface FeedWatcher {
  /**
   * Resolves true once the tenant has an event numbered after `after` (then the caller reads
   * the feed again), false when `timeoutMs` has passed or the service stops first.
   */
  waitForEventAfter(tenantId: string, after: number, timeoutMs: number): Promise<boolean>;
  /** What numbering on this instance just gave each tenant. */
  numbered(lastSequences: Map<string, number>): void;
  stop(): void;
}

/** How often the waiting tenants' last sequences are read: the most a long poll lags a change made on another instance. */
const pollMs = 100;

export function startFeedWatcher(repositories: Repositories, options: { logger: Logger }): FeedWatcher {
  const waiting = new Map<string, Set<Waiter>>();
  let stopped = false;

  const announce = (lastSequences: Map<string, number>) => {
    for (const [tenantId, last] of lastSequences) {
      for (const waiter of waiting.get(tenantId) ?? []) if (last > waiter.after) waiter.wake(true);
    }
  };

  let polling = false;
  const timer = setInterval(() => {
    if (polling || waiting.size === 0) return;
    polling = true;
    repositories.events
      .lastSequences([...waiting.keys()])
      .then(announce, (error: unknown) => options.logger.warn({ err: error }, 'watching the event feed failed; trying again'))
      .finally(() => {
        polling = false;
      });
  }, pollMs);

  return {
    waitForEventAfter(tenantId, after, timeoutMs) {
      if (stopped) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        const waiters = waiting.get(tenantId) ?? new Set<Waiter>();
        waiting.set(tenantId, waiters);
        const waiter: Waiter = {
          after,
          wake(numbered) {
            clearTimeout(timeout);
            waiters.delete(waiter);
            if (waiters.size === 0) waiting.delete(tenantId);
            resolve(numbered);
          },
        };
        const timeout = setTimeout(() => waiter.wake(false), timeoutMs);
        waiters.add(waiter);
      });
    },
    numbered: announce,
    stop() {
      stopped = true;
      clearInterval(timer);
      for (const waiters of [...waiting.values()]) for (const waiter of [...waiters]) waiter.wake(false);
    },
  };
}
