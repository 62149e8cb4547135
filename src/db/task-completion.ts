/**
 * When a task was closed (`completed_at`, version 2026-12-15): set when it moves from open
 * (`pending`, `in_progress`) to closed (`done`, `cancelled`), kept while it stays closed (a move
 * between `done` and `cancelled` included), cleared when it opens again.
 */
import type { components } from '../../generated/api';
import type { DbTimestamp } from './timestamps';

type TaskStatus = components['schemas']['TaskStatus'];

export const isClosed = (status: TaskStatus) => status === 'done' || status === 'cancelled';

/** The task's `completed_at` after a change to `status` (undefined: not changed) made `at`. */
export function completedAt(
  before: { status: TaskStatus; completed_at: DbTimestamp | null },
  status: TaskStatus | undefined,
  at: DbTimestamp,
): DbTimestamp | null {
  const after = status ?? before.status;
  if (!isClosed(after)) return null;
  return isClosed(before.status) ? (before.completed_at ?? at) : at;
}
