import type { Knex } from 'knex';
import { PreconditionFailedError, type ResourceName } from '../errors';
import { affectedRows } from './raw-answers';
import { WriteConflictError } from './database-errors';
import { nowForDb, type DbTimestamp } from './timestamps';
import type { Transaction } from './transactions';

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

/** Selects the one row a change is about, inside the change's transaction. */
export type Scoped = (trx: Transaction) => Knex.QueryBuilder;
/** Reads that row and locks it until the transaction ends. */
export type LockingRead<Row> = (trx: Transaction) => Promise<Row | undefined>;
/** The resources whose changes carry versions (ETags). */
type Resource = Extract<ResourceName, 'project' | 'task'>;

export interface VersionedRow {
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
  version: number;
}

/** A row before and after a change. */
export interface RowChange<Row> {
  before: Row;
  after: Row;
}

async function readForChange<Row extends VersionedRow>(
  trx: Transaction,
  read: LockingRead<Row>,
  condition: VersionCondition,
  resource: Resource,
) {
  const row = await read(trx);
  if (row !== undefined && condition !== undefined && !condition.includes(row.version))
    throw new PreconditionFailedError(resource);
  return row;
}

/**
 * Applies the changes to the row if its version passes the condition, with a new version and
 * an `updated_at` of now (never before the row's own `created_at`, even if the clock stepped
 * back); answers the row before and after, or undefined when there is no such row.
 *
 * The row is read with a lock and written only at the version read: where a lock on one node
 * does not hold another off (Galera), the conditional write still refuses a row that moved on,
 * and the transaction runs again (WriteConflictError).
 */
export async function changeVersioned<Row extends VersionedRow>(
  trx: Transaction,
  scoped: Scoped,
  read: LockingRead<Row>,
  changes: object | ((row: Row, updatedAt: DbTimestamp) => object),
  condition: VersionCondition,
  resource: Resource,
): Promise<RowChange<Row> | undefined> {
  const row = await readForChange(trx, read, condition, resource);
  if (row === undefined) return undefined;
  const now = nowForDb();
  const updatedAt = row.created_at > now ? row.created_at : now;
  // A function when a column follows from the row as it was (a task's completed_at).
  if (typeof changes === 'function') changes = changes(row, updatedAt);
  const changed: Row = { ...row, ...changes, updated_at: updatedAt, version: row.version + 1 };
  // Not waited for (the await matters only with LIBRARY_SHIMS=off): it goes with the change's event and COMMIT. On one server the row is locked,
  // so it cannot miss; on a Galera node, where that lock does not hold another node off, it goes
  // alone, and a miss stops the transaction before anything after it is sent.
  await trx.later({
    ...scoped(trx)
      .where('version', row.version)
      .update({ ...(changes as object), updated_at: changed.updated_at, version: changed.version })
      .toSQL(),
    answerMeans: (result) => (affectedRows(result) === 0 ? new WriteConflictError() : undefined),
  });
  return { before: row, after: changed };
}

/** Deletes the row if its version passes the condition; answers it as it was, or undefined when there is none. */
export async function deleteVersioned<Row extends VersionedRow>(
  trx: Transaction,
  scoped: Scoped,
  read: LockingRead<Row>,
  condition: VersionCondition,
  resource: Resource,
): Promise<Row | undefined> {
  const row = await readForChange(trx, read, condition, resource);
  if (row === undefined) return undefined;
  if ((await scoped(trx).where('version', row.version).delete()) === 0)
    throw new WriteConflictError();
  return row;
}

/** A read that locks what it reads until the transaction ends; SQLite, one writer at a time, needs no lock. */
export function lockingRead(knex: Knex, query: Knex.QueryBuilder): Knex.QueryBuilder {
  return knex.client.config.client === 'mysql2' ? query.forUpdate() : query;
}
