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
import type { ClaimedDelivery } from './delivery-queue-repository';
import type { PlanningClaim } from './webhook-planning-repository';

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
  options: {
    logger: Logger;
    /** Hears that attempts were just planned, and not claimed, for these endpoints of the tenant. */
    onPlanned: (tenantId: string, endpointIds: Set<string>) => void;
    /**
     * The delivery worker beside planning, which has attempts claimed as they are planned for the
     * endpoints it holds with nothing older waiting: at the peak a claim after planning was the
     * longest wait of an attempt.
     */
    claims?: {
      planningClaim(tenantId: string): PlanningClaim | undefined;
      planned(claiming: PlanningClaim, claimed: ClaimedDelivery[] | undefined): void;
    };
  },
): DeliveryPlanning {
  const { logger, onPlanned, claims } = options;
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
          const claiming = claims?.planningClaim(tenantId);
          let answer: Awaited<ReturnType<typeof repositories.webhookPlanning.planNext>>;
          try {
            answer = await repositories.webhookPlanning.planNext(
              tenantId,
              attemptsPerTransaction,
              claiming,
            );
          } catch (error) {
            if (claiming) claims!.planned(claiming, undefined);
            throw error;
          }
          const { planned, endpointIds, claimed, caughtUp } = answer;
          if (claiming) claims!.planned(claiming, claimed);
          // better-sqlite3 answers without giving the event loop a turn: without one here, the
          // requests that arrived meanwhile would not even be read until all planning ended.
          await setImmediate();
          if (caughtUp && pending.get(tenantId) === named) pending.delete(tenantId);
          if (planned > 0 && endpointIds.size > 0) onPlanned(tenantId, endpointIds);
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
