/**
 * Makes webhook deliveries. An instance serves an endpoint (one instance at a time, see the
 * deliveries repository): it claims the endpoint's due attempts a batch ahead, makes at most 10
 * at once outside any transaction, and writes each outcome back under its claim with the retry
 * it plans. An instance that dies leaves its claims to run out; their attempts are then made
 * again by any instance, with the same webhook-id.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Repositories } from '../db/repositories';
import type { ClaimedDelivery, DeliveryOutcome } from '../db/webhook-deliveries-repository';
import { repeatCycle } from '../background/repeating-cycle';
import { createWebhookClient, type AttemptResult } from './http-client';
import { retryDelayMs } from './retry-schedule';
import { signatureHeader } from './signer';

/** Attempts to one endpoint in flight at once, over every instance. */
export const maxInFlightPerEndpoint = 10;
/**
 * Attempts claimed ahead of those in flight, so a slot that frees is filled without waiting on
 * the database; more are claimed once half of them have started.
 */
const claimedAhead = 20;
/** How often an instance looks for due attempts (planned by another instance, or retries come due). */
const pollMs = 200;
/** How long a look waits after a poke, so the pokes close behind one make one look. */
const gatherMs = 5;
/** How long serving an endpoint lasts without renewal; renewed by every claim, and when a third of it has passed. */
const serveMs = 5000;
/** An endpoint whose every attempt has failed for this long is disabled. */
const failingForMs = 5 * 86_400_000;

interface Served {
  /** Attempts being made now. */
  inFlight: number;
  /** Attempts claimed, waiting for a slot. */
  queue: ClaimedDelivery[];
  /** When serving was last made sure of (the start of the transaction that renewed it). */
  renewedAt: number;
}

export interface DeliveryWorker {
  /** Says that attempts were just planned: look now rather than at the next poll. */
  poke(): void;
  /** Stops looking, calls off the attempts in flight and gives their claims and endpoints back. */
  stop(): Promise<void>;
}

export function startDeliveryWorker(
  repositories: Repositories,
  options: { logger: Logger; timeoutMs: number; retryScheduleMs: number[]; allowPrivateTargets: boolean },
): DeliveryWorker {
  const { logger, timeoutMs, retryScheduleMs } = options;
  const deliveries = repositories.webhookDeliveries;
  const client = createWebhookClient({ timeoutMs, allowPrivateTargets: options.allowPrivateTargets });
  const holder = randomUUID();
  const times = {
    // A claimed attempt waits for a slot (behind at most two rounds of attempts, each cut off at
    // the timeout), is made (the timeout again) and written back, with room to spare.
    leaseMs: (2 + claimedAhead / maxInFlightPerEndpoint) * timeoutMs + 5000,
    serveMs,
    // Another instance takes an endpoint over only once this one's attempts, started while it still
    // served it, have all been cut off: the cap holds across the handover.
    graceMs: timeoutMs + 1000,
  };
  const served = new Map<string, Served>();
  const attempts = new Set<Promise<void>>();
  const stopAttempts = new AbortController();
  let stopping = false;
  /** A look at every endpoint is due (the poll, or attempts were planned); otherwise only refills. */
  let scanDue = true;
  /** Endpoints served here whose claimed-ahead attempts ran out: claim more without a look at all. */
  const refills = new Set<string>();

  const outcomeOf = (delivery: ClaimedDelivery, result: AttemptResult): DeliveryOutcome => {
    const status = result.status ?? null;
    const succeeded = status !== null && status >= 200 && status < 300;
    const error = result.error ?? (status !== null && status >= 300 && status < 400 ? 'redirect not followed' : null);
    const delay = succeeded ? undefined : retryDelayMs(delivery.attempt, retryScheduleMs, result.retryAfterMs);
    return {
      succeeded,
      responseStatus: status,
      error,
      durationMs: result.durationMs,
      retryAt: delay === undefined ? undefined : new Date(Date.now() + delay),
      gone: status === 410,
      failingBefore: new Date(Date.now() - failingForMs),
    };
  };

  /**
   * Successes are written together: while one write runs, those that arrive wait for the next,
   * which takes them all in one statement (one commit for many, no wait when there is one).
   */
  const successes: Array<{ delivery: ClaimedDelivery; responseStatus: number; durationMs: number; written: () => void }> = [];
  let writingSuccesses = false;
  const writeSuccesses = async () => {
    if (writingSuccesses) return;
    writingSuccesses = true;
    while (successes.length > 0) {
      const batch = successes.splice(0, 500);
      try {
        const written = await deliveries.recordSuccesses(batch);
        if (written < batch.length) logger.info({ not_kept: batch.length - written }, 'webhook delivery outcomes were not kept: their endpoints were deleted, or their claims ran out and other attempts took their place');
      } catch (error) {
        // The claims run out, and the attempts are made again: at least once.
        logger.warn({ err: error, deliveries: batch.length }, 'writing webhook delivery outcomes failed; the attempts will be made again');
      }
      for (const success of batch) success.written();
    }
    writingSuccesses = false;
  };
  const recordSuccess = (delivery: ClaimedDelivery, outcome: DeliveryOutcome) =>
    new Promise<void>((written) => {
      successes.push({ delivery, responseStatus: outcome.responseStatus!, durationMs: outcome.durationMs, written });
      void writeSuccesses();
    });

  /** Makes the attempt: its HTTP call, the only part in flight to the endpoint. */
  const send = async (delivery: ClaimedDelivery): Promise<AttemptResult> => {
    let result: AttemptResult;
    if (delivery.event === undefined) result = { error: 'event no longer kept', durationMs: 0 };
    else {
      const body = JSON.stringify(delivery.event);
      const timestamp = new Date();
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'task-tracker-webhooks/1.3',
        'webhook-id': delivery.eventId,
        'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
        'webhook-signature': signatureHeader(delivery.eventId, timestamp, body, delivery.secrets),
      };
      result = await client.post(delivery.url, headers, body, stopAttempts.signal);
    }
    return result;
  };

  /** Writes the attempt's outcome back (or gives the claim back, when the attempt was called off). */
  const record = async (delivery: ClaimedDelivery, result: AttemptResult) => {
    if (result.abandoned) {
      await deliveries.release([delivery]).catch(() => {});
      return;
    }
    const outcome = outcomeOf(delivery, result);
    if (outcome.succeeded) {
      await recordSuccess(delivery, outcome);
      return;
    }
    const kept = await deliveries.recordOutcome(delivery, outcome).catch((error: unknown) => {
      // The claim runs out, and the attempt is made again: at least once.
      logger.warn({ err: error, delivery_id: delivery.deliveryId }, 'writing a webhook delivery outcome failed; the attempt will be made again');
      return true;
    });
    if (!kept) logger.info({ delivery_id: delivery.deliveryId }, 'a webhook delivery outcome was not kept: its endpoint was deleted, or its claim ran out and another attempt took its place');
    if (outcome.gone) logger.info({ webhook_endpoint_id: delivery.endpointId }, 'a webhook endpoint answered 410 and is disabled');
  };

  /** Gives up an endpoint's queue (it is no longer served here, or the instance stops). */
  const dropQueue = (endpointId: string, endpoint: Served) => {
    const dropped = endpoint.queue.splice(0);
    if (dropped.length > 0) void deliveries.release(dropped).catch(() => {});
    if (endpoint.inFlight === 0) served.delete(endpointId);
  };

  /** Starts the endpoint's queued attempts while it has free slots and is still surely served here. */
  const pump = (endpointId: string) => {
    const endpoint = served.get(endpointId);
    if (endpoint === undefined) return;
    if (Date.now() - endpoint.renewedAt > serveMs) return dropQueue(endpointId, endpoint);
    while (endpoint.inFlight < maxInFlightPerEndpoint && endpoint.queue.length > 0) {
      const delivery = endpoint.queue.shift()!;
      endpoint.inFlight++;
      const running = send(delivery)
        .catch((error: unknown): AttemptResult => {
          logger.error({ err: error, delivery_id: delivery.deliveryId }, 'a webhook delivery attempt could not be made');
          return { error: 'the attempt could not be made', durationMs: 0 };
        })
        .then((result) => {
          // The slot frees as the answer comes; the outcome is written meanwhile.
          endpoint.inFlight--;
          if (endpoint.inFlight === 0 && endpoint.queue.length === 0) served.delete(endpointId);
          else pump(endpointId);
          // Claimed ahead in batches: more once half of those claimed ahead have started.
          if (endpoint.queue.length <= claimedAhead / 2) refill(endpointId);
          return record(delivery, result);
        })
        .catch((error: unknown) => logger.error({ err: error, delivery_id: delivery.deliveryId }, 'a webhook delivery attempt failed unexpectedly'))
        .finally(() => attempts.delete(running));
      attempts.add(running);
    }
  };

  const claimFor = async (endpointId: string) => {
    const endpoint = served.get(endpointId);
    const room = maxInFlightPerEndpoint + claimedAhead - ((endpoint?.inFlight ?? 0) + (endpoint?.queue.length ?? 0));
    if (room <= 0 || stopping) return;
    const startedAt = Date.now();
    const claimed = await deliveries.claim(endpointId, holder, room, times);
    if (claimed === undefined) {
      if (endpoint) dropQueue(endpointId, endpoint);
      return;
    }
    if (stopping) return void (await deliveries.release(claimed).catch(() => {}));
    const now = served.get(endpointId) ?? { inFlight: 0, queue: [], renewedAt: startedAt };
    now.renewedAt = startedAt;
    now.queue.push(...claimed);
    if (now.inFlight > 0 || now.queue.length > 0) served.set(endpointId, now);
    pump(endpointId);
  };

  /**
   * Keeps serving the endpoints that have attempts here, renewing when a third of the time has
   * passed; at each poll, drops the attempts claimed ahead for an endpoint disabled or deleted
   * meanwhile (on any instance), so that nothing more than what is in flight reaches it.
   */
  const keepServing = async (looked: Set<string>, polled: boolean) => {
    if (polled && served.size > 0) {
      const still = await deliveries.stillServed([...served.keys()], holder);
      for (const [endpointId, endpoint] of served) if (!still.has(endpointId)) dropQueue(endpointId, endpoint);
    }
    await Promise.all(
      [...served].map(async ([endpointId, endpoint]) => {
        if (looked.has(endpointId) || Date.now() - endpoint.renewedAt < serveMs / 3) return;
        const startedAt = Date.now();
        if (await deliveries.keepServing(endpointId, holder, serveMs)) endpoint.renewedAt = startedAt;
        else dropQueue(endpointId, endpoint);
      }),
    );
  };

  /** One look: claims for each endpoint with due attempts (or to refill), and keeps serving those with attempts here. */
  const cycle = async () => {
    try {
      const polled = scanDue;
      const scanned = polled ? await deliveries.endpointsWithDueAttempts(holder, times.graceMs) : [];
      scanDue = false;
      const endpointIds = new Set([...scanned, ...refills]);
      refills.clear();
      await Promise.all([...endpointIds].map(claimFor));
      await keepServing(endpointIds, polled);
    } catch (error) {
      logger.warn({ err: error }, 'looking for webhook deliveries failed; trying again shortly');
    }
  };

  const cycles = repeatCycle(cycle, { gatherMs, pollMs: () => pollMs, onPoll: () => (scanDue = true) });

  function poke() {
    scanDue = true;
    cycles.soon();
  }

  function refill(endpointId: string) {
    refills.add(endpointId);
    cycles.soon();
  }

  return {
    poke,
    async stop() {
      stopping = true;
      await cycles.stop();
      const endpointIds = [...served.keys()];
      const queued = [...served.values()].flatMap((endpoint) => endpoint.queue.splice(0));
      await deliveries.release(queued).catch(() => {});
      stopAttempts.abort();
      await Promise.all([...attempts]);
      await deliveries.stopServing(endpointIds, holder).catch(() => {});
      await client.close();
    },
  };
}
