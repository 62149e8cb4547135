/**
 * Why a webhook delivery thread ended unasked, and whom its ends point at: small pure rules for
 * delivery-thread.ts. A thread that keeps dying while one tenant holds the most of its work is
 * most likely dying of that tenant's work, so that tenant's deliveries are paused (tenant-pauses.ts)
 * rather than every tenant's deliveries stalling at each restart.
 */
export const threadEndCauses = ['out_of_memory', 'error', 'exit'] as const;
export type ThreadEndCause = (typeof threadEndCauses)[number];

/** The cause of an end, from the error the thread reported before it (none: it exited on its own). */
export function threadEndCause(error: unknown): ThreadEndCause {
  if (error === undefined) return 'exit';
  return (error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY'
    ? 'out_of_memory'
    : 'error';
}

/** Ends in a row with the same tenant holding the most of the thread's work before it is paused. */
export const endsBeforePause = 3;
/** A thread that ran this long before it ended starts a new row: its end says little of the ones before. */
export const rowBrokenAfterMs = 10 * 60_000;

export interface ThreadEnd {
  /** The tenant that held the most of the thread's pending work when it last said, if any. */
  busiest: string | undefined;
  /** How long the thread ran. */
  ranMs: number;
}

/**
 * The ends that still count, the newest last, once `end` is added: a long-lived thread's end
 * starts a new row, and a row never grows past the ends it takes to pause.
 */
export function endsInARow(before: readonly ThreadEnd[], end: ThreadEnd): ThreadEnd[] {
  const row = end.ranMs >= rowBrokenAfterMs ? [end] : [...before, end];
  return row.slice(-endsBeforePause);
}

/** The tenant to pause: the one that held the most at each of the last `endsBeforePause` ends in a row. */
export function tenantToPause(row: readonly ThreadEnd[]): string | undefined {
  if (row.length < endsBeforePause) return undefined;
  const [first, ...rest] = row.slice(-endsBeforePause).map((end) => end.busiest);
  return first !== undefined && rest.every((tenant) => tenant === first) ? first : undefined;
}

/** A thread that ended sooner than this after it started waits `restartDelayMs` to start again. */
export const diedAtOnceMs = 1_000;
export const restartDelayMs = 1_000;

/**
 * How long to wait before starting a thread that ended after running `ranMs`: at once, as other
 * tenants' deliveries wait meanwhile, unless it died at once (a setting or a bug that kills every
 * thread), which would otherwise spin.
 */
export function restartAfterMs(ranMs: number): number {
  return ranMs < diedAtOnceMs ? restartDelayMs : 0;
}
