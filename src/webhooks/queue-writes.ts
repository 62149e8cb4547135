/**
 * The worker's writes that must reach the queue even when the database is away for a while:
 * outcomes, and claims given back. An outcome that fails to be written is tried again with
 * backoff while its claim lasts (past it, the attempt is made again anyway). What could not be
 * given back, and claims whose answers were lost (their node died at the commit), are given back
 * at each look until that succeeds or their leases run out, so no attempt waits out a lease for
 * a node's loss.
 */
import type { Logger } from 'pino';
import type {
  ClaimedDelivery,
  DeliveryOutcome,
  DeliveryQueueRepository,
  DisabledReason,
} from './delivery-queue-repository';

/** Successes written in one statement at the most. */
const successesPerWrite = 500;
/**
 * How long a success waits for others to share its write: at thousands of deliveries a second a
 * write then serves tens of them, not the few that arrive during one write's round trips. An
 * instance that dies meanwhile leaves those attempts to be made again, as any crash before a write.
 */
const successesGatherMs = 25;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The wait before the next try of a write that failed `failures` times: 100 ms doubling to 2 s, with jitter. */
const backoffMs = (failures: number) =>
  Math.min(2000, 100 * 2 ** (failures - 1)) * (0.5 + Math.random() / 2);

interface PendingSuccess {
  /** performance.now() when it arrived. */
  at: number;
  delivery: ClaimedDelivery;
  responseStatus: number;
  durationMs: number;
  recovers: boolean;
  written: () => void;
}

export type QueueWrites = ReturnType<typeof queueWrites>;

export function queueWrites(
  queue: Pick<
    DeliveryQueueRepository,
    'release' | 'releaseClaim' | 'recordOutcome' | 'recordSuccesses'
  >,
  options: { logger: Logger; stopping: () => boolean },
) {
  const { logger, stopping } = options;
  /** Attempts whose release failed, to give back at the next look. */
  const unreleased: ClaimedDelivery[] = [];
  /** Claims that may have committed though their answers were lost, by claim: to give back at each look until their leases run out. */
  const lostClaims = new Map<string, { endpointIds: string[]; leaseUntil: number }>();

  /** Whether a write may be tried again after `wait`, before the claim runs out. */
  const mayRetry = (delivery: ClaimedDelivery, wait: number) =>
    !stopping() && Date.now() + wait < delivery.leaseUntil;

  /** Gives attempts back unmade; never fails: what could not be given back now is tried again at the next look. */
  const giveBack = async (claimed: ClaimedDelivery[]) => {
    if (claimed.length === 0) return;
    try {
      await queue.release(claimed);
    } catch {
      unreleased.push(...claimed);
    }
  };

  /**
   * Successes are written together: the first waits `successesGatherMs` for others (less when
   * `successesPerWrite` are waiting), and those that arrive while a write runs wait for the next,
   * which takes them all in one statement, one commit for many. A write that fails is tried
   * again, with backoff, for those whose claims allow it.
   */
  const successes: PendingSuccess[] = [];
  let writingSuccesses = false;
  const writeSuccesses = async () => {
    if (writingSuccesses) return;
    writingSuccesses = true;
    let failures = 0;
    while (successes.length > 0) {
      const gathering = successes[0].at + successesGatherMs - performance.now();
      if (gathering > 0 && successes.length < successesPerWrite && !stopping())
        await sleep(gathering);
      const batch = successes.splice(0, successesPerWrite);
      try {
        const written = await queue.recordSuccesses(batch);
        failures = 0;
        if (written < batch.length)
          logger.info(
            { not_kept: batch.length - written },
            'webhook delivery outcomes were not kept: their endpoints were deleted, or their claims ran out and other attempts took their place',
          );
        for (const success of batch) success.written();
      } catch (error) {
        const wait = backoffMs(++failures);
        const kept = batch.filter((success) => mayRetry(success.delivery, wait));
        const lost = batch.filter((success) => !kept.includes(success));
        if (lost.length > 0)
          logger.warn(
            { err: error, deliveries: lost.length },
            'writing webhook delivery outcomes failed until their claims ran out; the attempts will be made again',
          );
        for (const success of lost) success.written();
        successes.unshift(...kept);
        if (kept.length > 0) await sleep(wait);
      }
    }
    writingSuccesses = false;
  };

  return {
    giveBack,

    /** Gives back what earlier tries could not, as long as the leases have not run out by themselves. */
    async giveBackLeftovers(): Promise<void> {
      const now = Date.now();
      await giveBack(unreleased.splice(0).filter((delivery) => delivery.leaseUntil > now));
      for (const [claim, lost] of lostClaims) {
        if (lost.leaseUntil <= now) lostClaims.delete(claim);
        // Kept until its lease runs out: a commit that was under way as its node died may show on
        // the other nodes a little after the first try found nothing.
        else await queue.releaseClaim(lost.endpointIds, claim).catch(() => {});
      }
    },

    /** A claim (of these endpoints' attempts) whose answer did not come: it may have committed, and is given back at each look until `leaseUntil`. */
    claimMayBeLost(claim: string, endpointIds: string[], leaseUntil: number): void {
      lostClaims.set(claim, { endpointIds, leaseUntil });
    },

    /** Writes a success's outcome with others; resolves once written, or once its claim has run out. */
    recordSuccess(delivery: ClaimedDelivery, outcome: DeliveryOutcome): Promise<void> {
      return new Promise<void>((written) => {
        successes.push({
          at: performance.now(),
          delivery,
          responseStatus: outcome.responseStatus!,
          durationMs: outcome.durationMs,
          recovers: outcome.endpoint.recovers,
          written,
        });
        void writeSuccesses();
      });
    },

    /** Writes a failed attempt's outcome, trying again with backoff while its claim allows. */
    async recordFailure(
      delivery: ClaimedDelivery,
      outcome: DeliveryOutcome,
    ): Promise<{ kept: boolean; disabled?: DisabledReason }> {
      for (let failures = 1; ; failures++) {
        try {
          return await queue.recordOutcome(delivery, outcome);
        } catch (error) {
          const wait = backoffMs(failures);
          if (!mayRetry(delivery, wait)) {
            logger.warn(
              { err: error, delivery_id: delivery.deliveryId },
              'writing a webhook delivery outcome failed until its claim ran out; the attempt will be made again',
            );
            return { kept: true };
          }
          await sleep(wait);
        }
      }
    },
  };
}
