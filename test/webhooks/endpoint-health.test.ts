/**
 * The rule that disables failing endpoints, and what an attempt's result comes to: pure
 * functions, checked without a database or a receiver.
 */
import { outcomeOf } from '../../src/webhooks/attempt-outcome';
import { failingForMs, healthAfter } from '../../src/webhooks/endpoint-health';

const now = Date.parse('2026-11-27T12:00:00.000Z');
const ok = { succeeded: true, responseStatus: 204 };
const failed = { succeeded: false, responseStatus: 500 };
const gone = { succeeded: false, responseStatus: 410 };

describe('healthAfter', () => {
  it('ends a run of failures with a success, and leaves a healthy endpoint alone', () => {
    expect(healthAfter(ok, true, now)).toEqual({ recovers: true, startsFailing: false });
    expect(healthAfter(ok, false, now)).toEqual({ recovers: false, startsFailing: false });
  });

  it('begins a run of failures with the first failure, which cannot disable the endpoint yet', () => {
    expect(healthAfter(failed, false, now)).toEqual({ recovers: false, startsFailing: true });
  });

  it('disables a failing endpoint whose run of failures began five days ago or more', () => {
    expect(healthAfter(failed, true, now)).toEqual({
      recovers: false,
      startsFailing: false,
      disable: { reason: 'failing', failingBefore: new Date(now - 5 * 86_400_000) },
    });
    expect(failingForMs).toBe(5 * 86_400_000);
  });

  it('disables an endpoint whose receiver answers 410 at once, failing before or not', () => {
    expect(healthAfter(gone, false, now)).toEqual({
      recovers: false,
      startsFailing: true,
      disable: { reason: 'gone' },
    });
    expect(healthAfter(gone, true, now)).toEqual({
      recovers: false,
      startsFailing: false,
      disable: { reason: 'gone' },
    });
  });

  it('takes a failure without any answer (a timeout, a refusal) as a failure', () => {
    expect(healthAfter({ succeeded: false, responseStatus: null }, true, now).disable).toEqual({
      reason: 'failing',
      failingBefore: new Date(now - failingForMs),
    });
  });
});

describe('outcomeOf', () => {
  const schedule = [60_000, 600_000];
  /** No jitter: the wait is the schedule's. */
  const middle = () => 0.5;
  const first = { attempt: 1, endpointFailing: false };

  it('takes a 2xx as a success, with no retry, ending a run of failures', () => {
    expect(
      outcomeOf(
        { attempt: 1, endpointFailing: true },
        { status: 200, durationMs: 12 },
        schedule,
        now,
      ),
    ).toEqual({
      succeeded: true,
      responseStatus: 200,
      error: null,
      durationMs: 12,
      retryAt: undefined,
      endpoint: { recovers: true, startsFailing: false },
    });
  });

  it('retries a failure after the wait the schedule gives its attempt', () => {
    const outcome = outcomeOf(first, { status: 503, durationMs: 5 }, schedule, now, middle);
    expect(outcome).toMatchObject({ succeeded: false, responseStatus: 503, error: null });
    expect(outcome.retryAt).toEqual(new Date(now + 60_000));
    expect(
      outcomeOf(
        { attempt: 2, endpointFailing: true },
        { status: 503, durationMs: 5 },
        schedule,
        now,
        middle,
      ).retryAt,
    ).toEqual(new Date(now + 600_000));
  });

  it('plans no retry once the schedule is spent', () => {
    const outcome = outcomeOf(
      { attempt: 3, endpointFailing: true },
      { error: 'timeout', durationMs: 10_000 },
      schedule,
      now,
      middle,
    );
    expect(outcome).toMatchObject({ succeeded: false, responseStatus: null, error: 'timeout' });
    expect(outcome.retryAt).toBeUndefined();
  });

  it('waits for a later Retry-After than the schedule', () => {
    const outcome = outcomeOf(
      first,
      { status: 429, retryAfterMs: 3_600_000, durationMs: 5 },
      schedule,
      now,
      middle,
    );
    expect(outcome.retryAt).toEqual(new Date(now + 3_600_000));
  });

  it('says a redirect was not followed, and counts it as a failure', () => {
    expect(outcomeOf(first, { status: 302, durationMs: 5 }, schedule, now, middle)).toMatchObject({
      succeeded: false,
      responseStatus: 302,
      error: 'redirect not followed',
      endpoint: { recovers: false, startsFailing: true },
    });
  });

  it('disables the endpoint on a 410, and still plans the retry the schedule gives', () => {
    const outcome = outcomeOf(first, { status: 410, durationMs: 5 }, schedule, now, middle);
    expect(outcome.endpoint.disable).toEqual({ reason: 'gone' });
    expect(outcome.retryAt).toEqual(new Date(now + 60_000));
  });
});
