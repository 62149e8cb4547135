/** Why a webhook delivery thread ended unasked, as its restart is logged and counted. */
export const threadEndCauses = ['out_of_memory', 'error', 'exit'] as const;
export type ThreadEndCause = (typeof threadEndCauses)[number];

/** The cause of an end, from the error the thread reported before it (none: it exited on its own). */
export function threadEndCause(error: unknown): ThreadEndCause {
  if (error === undefined) return 'exit';
  return (error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY'
    ? 'out_of_memory'
    : 'error';
}
