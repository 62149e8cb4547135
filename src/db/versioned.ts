import type { Knex } from 'knex';
import { PreconditionFailedError } from '../errors';
import { nowForDb, type DbTimestamp } from './timestamps';

/** A resource with the version that its ETag shows; every change adds one. */
export interface Versioned<T> {
  value: T;
  version: number;
}

/**
 * The versions a conditional change accepts (from If-Match), or undefined for an
 * unconditional one.
 */
export type VersionCondition = number[] | undefined;

/** Selects the one row a change is about, fresh for each statement. */
type Scoped = () => Knex.QueryBuilder;
type Resource = 'project' | 'task';

interface VersionedRow {
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
  version: number;
}

function onlyIf(query: Knex.QueryBuilder, condition: VersionCondition): Knex.QueryBuilder {
  return condition === undefined ? query : query.whereIn('version', condition);
}

/**
 * Applies the changes to the row if its version passes the condition, with a new version and
 * an `updated_at` of now (never before the row's own `created_at`, even if the clock stepped
 * back); answers the row as changed, or undefined when there is no such row.
 *
 * Optimistic: the row is read, then updated only if its version is still the one read, so the
 * answer is built from the row as this change left it, in two statements and no transaction.
 * When another change came between the two, the row is read again.
 */
export async function changeVersioned<Row extends VersionedRow>(
  scoped: Scoped,
  changes: object,
  condition: VersionCondition,
  resource: Resource,
  /** Reads the row as `scoped` selects it; a compiled statement where the repository has one. */
  read: () => Promise<Row | undefined> = () => scoped().first(),
): Promise<Row | undefined> {
  for (;;) {
    const row = await read();
    if (row === undefined) return undefined;
    if (condition !== undefined && !condition.includes(row.version)) throw new PreconditionFailedError(resource);
    const now = nowForDb();
    const changed: Row = { ...row, ...changes, updated_at: row.created_at > now ? row.created_at : now, version: row.version + 1 };
    const updated = await scoped()
      .where('version', row.version)
      .update({ ...changes, updated_at: changed.updated_at, version: changed.version });
    if (updated > 0) return changed;
  }
}

/** Deletes the row if its version passes the condition; false when there is no such row. */
export async function deleteVersioned(scoped: Scoped, condition: VersionCondition, resource: Resource): Promise<boolean> {
  if ((await onlyIf(scoped(), condition).delete()) > 0) return true;
  // Nothing deleted: 412 if the row is there but at another version, 404 if it is not.
  if (condition !== undefined && (await scoped().first('version')) !== undefined) throw new PreconditionFailedError(resource);
  return false;
}
