import type { Knex } from 'knex';
import { PreconditionFailedError } from '../errors';
import { nowForDb } from './timestamps';

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

function onlyIf(query: Knex.QueryBuilder, condition: VersionCondition): Knex.QueryBuilder {
  return condition === undefined ? query : query.whereIn('version', condition);
}

/**
 * After a change touched no row: 404 (undefined) when the resource does not exist, 412 when it
 * exists but its version was not one the condition accepts.
 */
async function missingOrStale(scoped: Scoped, condition: VersionCondition, resource: Resource): Promise<undefined> {
  if (condition !== undefined && (await scoped().first('version')) !== undefined) throw new PreconditionFailedError(resource);
  return undefined;
}

/**
 * Applies the changes to the row if its version passes the condition, with a new version and
 * an `updated_at` of now (never before the row's own `created_at`, even if the clock stepped
 * back); answers the row as changed. Run it in a transaction, so the answer is the change's.
 */
export async function changeVersioned<Row>(trx: Knex.Transaction, scoped: Scoped, changes: object, condition: VersionCondition, resource: Resource): Promise<Row | undefined> {
  const now = nowForDb();
  const updated = await onlyIf(scoped(), condition).update({
    ...changes,
    updated_at: trx.raw('CASE WHEN created_at > ? THEN created_at ELSE ? END', [now, now]),
    version: trx.raw('version + 1'),
  });
  if (updated === 0) return missingOrStale(scoped, condition, resource);
  return scoped().first();
}

/** Deletes the row if its version passes the condition; false when there is no such row. */
export async function deleteVersioned(scoped: Scoped, condition: VersionCondition, resource: Resource): Promise<boolean> {
  if ((await onlyIf(scoped(), condition).delete()) > 0) return true;
  return (await missingOrStale(scoped, condition, resource)) ?? false;
}
