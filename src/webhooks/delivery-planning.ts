/**
 * Plans webhook deliveries after their events are numbered, apart from the numbering, so that
 * numbering never waits for it. Told which tenants just had events numbered, it plans their
 * deliveries a bounded chunk per transaction, taking the tenants in turn, so one tenant with many
 * endpoints neither holds a connection for long nor holds another tenant's deliveries back. The
 * instance that takes the numbering lease over also looks for tenants whose planning the holder
 * before it left unfinished (it stopped or died mid-way).
 */
import { setImmediate } from 'node:timers/promises';
import type { Logger } from 'pino';
import { repeatCycle } from '../background/repeating-cycle';
import type { WebhookRepositories } from './repositories';

/** The most attempts planned in one transaction. */
const attemptsPerTransaction = 500;
/** Numbering has gathered its events already: planning them waits for nothing more. */
const gatherMs = 0;
/** How soon planning that failed (the database was away) is tried again. */
const retryMs = 1000;

export interface DeliveryPlanning {
  /** These tenants have events numbered whose deliveries are to be planned. */
  plan(tenantIds: Iterable<string>): void;
  /** Looks for every tenant whose numbered events are not all planned, and plans them. */
  catchUp(): void;
  stop(): Promise<void>;
}

export function startDeliveryPlanning(
  repositories: WebhookRepositories,
  options: { logger: Logger; onPlanned: () => void },
): DeliveryPlanning {
  const { logger, onPlanned } = options;
  /**
   * The tenants to plan, each with how many times it was named: a tenant named again while its
   * last chunk was being planned stays, even if that chunk reached what it had read as the end.
   */
  const pending = new Map<string, number>();
  let lookForUnfinished = false;
  let stopping = false;

  const add = (tenantId: string) => pending.set(tenantId, (pending.get(tenantId) ?? 0) + 1);

  const cycle = async () => {
    try {
      if (lookForUnfinished) {
        lookForUnfinished = false;
        try {
          for (const tenantId of await repositories.webhookPlanning.laggingTenants()) add(tenantId);
        } catch (error) {
          lookForUnfinished = true;
          throw error;
        }
      }
      while (pending.size > 0 && !stopping) {
        for (const [tenantId, named] of [...pending]) {
          if (stopping) return;
          const { planned, caughtUp } = await repositories.webhookPlanning.planNext(
            tenantId,
            attemptsPerTransaction,
          );
          // better-sqlite3 answers without giving the event loop a turn: without one here, the
          // requests that arrived meanwhile would not even be read until all planning ended.
          await setImmediate();
          if (caughtUp && pending.get(tenantId) === named) pending.delete(tenantId);
          if (planned > 0) onPlanned();
        }
      }
    } catch (error) {
      logger.warn({ err: error }, 'planning webhook deliveries failed; trying again shortly');
    }
  };

  const cycles = repeatCycle(cycle, { gatherMs, pollMs: () => retryMs });

  return {
    plan(tenantIds) {
      for (const tenantId of tenantIds) add(tenantId);
      cycles.soon();
    },
    catchUp() {
      lookForUnfinished = true;
      cycles.soon();
    },
    async stop() {
      stopping = true;
      await cycles.stop();
    },
  };
}
