/** When a failed attempt is tried again: the schedule's wait, with jitter, never before Retry-After. */

/** Each wait is moved by up to this share of it, either way, so failed deliveries do not retry in step. */
const jitter = 0.2;
/** The longest Retry-After honoured: a receiver cannot park a delivery for longer. */
const longestRetryAfterMs = 7 * 86_400_000;

/**
 * The wait before the attempt after `attempt` (1 for the first), or undefined once the schedule
 * is spent.
 */
export function retryDelayMs(
  attempt: number,
  scheduleMs: number[],
  retryAfterMs?: number,
  random: () => number = Math.random,
): number | undefined {
  if (attempt > scheduleMs.length) return undefined;
  const wait = scheduleMs[attempt - 1] * (1 + (random() * 2 - 1) * jitter);
  return Math.max(wait, Math.min(retryAfterMs ?? 0, longestRetryAfterMs));
}

/** A Retry-After header (seconds, or an HTTP date) as milliseconds from now; undefined when absent or unreadable. */
export function parseRetryAfter(
  value: string | string[] | undefined,
  now = Date.now(),
): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return undefined;
  if (/^\s*\d+\s*$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
