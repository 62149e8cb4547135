/**
 * Makes webhook deliveries: finds the enabled endpoints with attempts due, claims up to 10
 * attempts in flight per endpoint (across every instance, see the deliveries repository), makes
 * each attempt outside any transaction, and writes its outcome back under its claim, with the
 * retry it plans. An instance that dies leaves its claims to run out; their attempts are then
 * made again by any instance, with the same webhook-id.
 */
import type { Logger } from 'pino';
import type { Repositories } from '../db/repositories';
import type { ClaimedDelivery, DeliveryOutcome } from '../db/webhook-deliveries-repository';
import { createWebhookClient, type AttemptResult } from './http-client';
import { retryDelayMs } from './retry-schedule';
import { signatureHeader } from './signer';

/** Attempts to one endpoint in flight at once, over every instance. */
export const maxInFlightPerEndpoint = 10;
/** How often an instance looks for due attempts (planned by another instance, or retries come due). */
const pollMs = 200;
/** How long a look waits after a poke, so the pokes close behind one make one look. */
const gatherMs = 5;
/** An endpoint whose every attempt has failed for this long is disabled. */
const failingForMs = 5 * 86_400_000;

export interface DeliveryWorker {
  /** Says that attempts were just planned, or a slot freed: look now rather than at the next poll. */
  poke(): void;
  /** Stops looking, calls off the attempts in flight and gives their claims back. */
  stop(): Promise<void>;
}

export function startDeliveryWorker(
  repositories: Repositories,
  options: { logger: Logger; timeoutMs: number; retryScheduleMs: number[]; allowPrivateTargets: boolean },
): DeliveryWorker {
  const { logger, timeoutMs, retryScheduleMs } = options;
  const deliveries = repositories.webhookDeliveries;
  const client = createWebhookClient({ timeoutMs, allowPrivateTargets: options.allowPrivateTargets });
  // A claim outlives its attempt (cut off at the timeout) and the writing of the outcome with room to spare.
  const leaseMs = 2 * timeoutMs + 5000;
  const inFlight = new Map<string, Set<ClaimedDelivery>>();
  const attempts = new Set<Promise<void>>();
  const stopAttempts = new AbortController();
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let gathering = false;

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

  const attempt = async (delivery: ClaimedDelivery) => {
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
    if (result.abandoned) {
      await deliveries.release([delivery]).catch(() => {});
      return;
    }
    const outcome = outcomeOf(delivery, result);
    const kept = await deliveries.recordOutcome(delivery, outcome).catch((error: unknown) => {
      // The claim runs out, and the attempt is made again: at least once.
      logger.warn({ err: error, delivery_id: delivery.deliveryId }, 'writing a webhook delivery outcome failed; the attempt will be made again');
      return true;
    });
    if (!kept) logger.warn({ delivery_id: delivery.deliveryId }, 'a webhook delivery outcome came after its claim ran out; another attempt took its place');
    if (outcome.gone) logger.info({ webhook_endpoint_id: delivery.endpointId }, 'a webhook endpoint answered 410 and is disabled');
  };

  const start = (delivery: ClaimedDelivery) => {
    const ofEndpoint = inFlight.get(delivery.endpointId) ?? new Set<ClaimedDelivery>();
    inFlight.set(delivery.endpointId, ofEndpoint);
    ofEndpoint.add(delivery);
    const running = attempt(delivery)
      .catch((error: unknown) => logger.error({ err: error, delivery_id: delivery.deliveryId }, 'a webhook delivery attempt failed unexpectedly'))
      .finally(() => {
        ofEndpoint.delete(delivery);
        if (ofEndpoint.size === 0) inFlight.delete(delivery.endpointId);
        attempts.delete(running);
        poke();
      });
    attempts.add(running);
  };

  /** One look: claims what each endpoint with due attempts has room for, and starts it. */
  const cycle = async () => {
    try {
      const endpointIds = await deliveries.endpointsWithDueAttempts();
      await Promise.all(
        endpointIds.map(async (endpointId) => {
          const room = maxInFlightPerEndpoint - (inFlight.get(endpointId)?.size ?? 0);
          if (room <= 0 || stopping) return;
          for (const delivery of await deliveries.claim(endpointId, room, maxInFlightPerEndpoint, leaseMs)) {
            if (stopping) await deliveries.release([delivery]).catch(() => {});
            else start(delivery);
          }
        }),
      );
    } catch (error) {
      logger.warn({ err: error }, 'looking for webhook deliveries failed; trying again shortly');
    }
  };

  const run = () => {
    if (stopping) return;
    if (running) {
      again = true;
      return;
    }
    clearTimeout(timer);
    gathering = false;
    running = cycle().finally(() => {
      running = undefined;
      if (stopping) return;
      timer = setTimeout(run, again ? gatherMs : pollMs);
      again = false;
    });
  };

  function poke() {
    if (stopping) return;
    if (running) again = true;
    else if (!gathering) {
      gathering = true;
      clearTimeout(timer);
      timer = setTimeout(run, gatherMs);
    }
  }

  run();

  return {
    poke,
    async stop() {
      stopping = true;
      clearTimeout(timer);
      await running;
      stopAttempts.abort();
      await Promise.all([...attempts]);
      await client.close();
    },
  };
}
