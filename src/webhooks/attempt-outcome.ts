/** What an attempt's result comes to: whether it succeeded, the error it is logged with, its retry, and its endpoint's health. */
import type { ClaimedDelivery, DeliveryOutcome } from './delivery-queue-repository';
import { healthAfter } from './endpoint-health';
import type { AttemptResult } from './http-client';
import { retryDelayMs } from './retry-schedule';

/**
 * A 2xx succeeds; any other status, or none, fails and is tried again on the schedule (a 3xx is
 * not followed, and says so). `random` moves the retry's wait (see retry-schedule.ts).
 */
export function outcomeOf(
  delivery: Pick<ClaimedDelivery, 'attempt' | 'endpointFailing'>,
  result: AttemptResult,
  retryScheduleMs: number[],
  now: number = Date.now(),
  random: () => number = Math.random,
): DeliveryOutcome {
  const status = result.status ?? null;
  const succeeded = status !== null && status >= 200 && status < 300;
  const error =
    result.error ??
    (status !== null && status >= 300 && status < 400 ? 'redirect not followed' : null);
  const delay = succeeded
    ? undefined
    : retryDelayMs(delivery.attempt, retryScheduleMs, result.retryAfterMs, random);
  return {
    succeeded,
    responseStatus: status,
    error,
    durationMs: result.durationMs,
    retryAt: delay === undefined ? undefined : new Date(now + delay),
    endpoint: healthAfter({ succeeded, responseStatus: status }, delivery.endpointFailing, now),
  };
}
