import type { Knex } from 'knex';
import { PreconditionFailedError } from '../errors';

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

/** Narrows a change to the accepted versions. */
export function onlyIf<Q extends Knex.QueryBuilder>(query: Q, condition: VersionCondition): Q {
  return condition === undefined ? query : (query.whereIn('version', condition) as Q);
}

/**
 * After a change touched no row: 404 (undefined) when the resource does not exist, 412 when it
 * exists but its version was not one the condition accepts.
 */
export async function missingOrStale(exists: Promise<unknown>, condition: VersionCondition, resource: 'project' | 'task'): Promise<undefined> {
  if (condition !== undefined && (await exists) !== undefined) throw new PreconditionFailedError(resource);
  return undefined;
}
