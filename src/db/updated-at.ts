import type { Knex } from 'knex';
import { nowForDb } from './timestamps';

/**
 * The value of `updated_at` in an UPDATE: the time of the update, but never before the row's
 * own `created_at`, even if the clock stepped back since it was created.
 */
export function updatedAtNotBeforeCreation(db: Knex | Knex.Transaction): Knex.Raw {
  const now = nowForDb();
  return db.raw('CASE WHEN created_at > ? THEN created_at ELSE ? END', [now, now]);
}
