/**
 * When an endpoint's deliveries disable it: at once when its receiver answers 410 Gone, and when
 * every attempt has failed for five days (its run of failures began that long ago and no attempt
 * has succeeded since). The run begins with a failure of an endpoint that was not failing and
 * ends with a success; it is stored as the endpoint's failing_since.
 */
import type { EndpointHealthChange } from './delivery-queue-repository';

/** An endpoint whose every attempt has failed for this long is disabled. */
export const failingForMs = 5 * 86_400_000;

/** The receiver's answer that says the endpoint is gone for good. */
export const goneStatus = 410;

/**
 * What an attempt's outcome does to its endpoint, which was `failing` when the attempt was
 * claimed. The five days are checked where the change is written, against the endpoint's stored
 * failing_since, so that every instance's outcomes count toward one run.
 */
export function healthAfter(
  attempt: { succeeded: boolean; responseStatus: number | null },
  failing: boolean,
  now: number = Date.now(),
): EndpointHealthChange {
  if (attempt.succeeded) return { recovers: failing, startsFailing: false };
  const change = { recovers: false, startsFailing: !failing };
  if (attempt.responseStatus === goneStatus) return { ...change, disable: { reason: 'gone' } };
  // A run that begins with this failure cannot be five days old yet.
  if (!failing) return change;
  return {
    ...change,
    disable: { reason: 'failing', failingBefore: new Date(now - failingForMs) },
  };
}
