/**
 * Handler types, all derived from the generated `operations`: a handler takes the request as
 * the document describes it (already validated) and returns one of its success responses.
 */
import type { ApiVersion } from '../versions/versions';
import type { operations, paths } from '../../generated/api';
import type { Principal } from '../db/api-keys-repository';
import type { WriteContext } from '../db/transactions';
import type { Versioned } from '../db/versioned';
import { NotFoundError, type ResourceName } from '../errors';

export type OperationId = keyof operations;
type Operation<K extends OperationId> = operations[K];
type JsonContent<R> = R extends { content: { 'application/json': infer Body } } ? Body : never;

type PathParams<K extends OperationId> = Operation<K>['parameters']['path'];
type HeaderParams<K extends OperationId> = NonNullable<Operation<K>['parameters']['header']>;
/** Query parameters; those with a default in the document arrive filled in by validation. */
type QueryParams<K extends OperationId> = NonNullable<Operation<K>['parameters']['query']>;
type RequestBody<K extends OperationId> =
  Operation<K> extends { requestBody: infer R } ? JsonContent<NonNullable<R>> : undefined;

type SuccessStatusOf<K extends OperationId> = keyof Operation<K>['responses'] &
  (200 | 201 | 202 | 204);
/** A reply; `version` of a single resource becomes its ETag. */
type ReplyWith<R, S> = [JsonContent<R>] extends [never]
  ? { status: S }
  : { status: S; body: JsonContent<R>; location?: string; version?: number };

export type Reply<K extends OperationId> = {
  [S in SuccessStatusOf<K>]: ReplyWith<Operation<K>['responses'][S], S>;
}[SuccessStatusOf<K>];

/**
 * The HTTP methods that change something: an operation of one of them goes through the unit of
 * work, in one transaction (the router reads the method; these types read it from `paths`).
 */
export const changingMethods = ['post', 'put', 'patch', 'delete'] as const;
type ChangingMethod = (typeof changingMethods)[number];
type ReadingMethod = 'get' | 'head';

/** The operations the document gives one of `Methods`, by their operationIds. */
type OperationsOf<Methods extends string> = {
  [K in OperationId]: Operation<K> extends OperationTypesOf<Methods> ? K : never;
}[OperationId];
type OperationTypesOf<Methods extends string> = NonNullable<
  { [P in keyof paths]: paths[P][Methods & keyof paths[P]] }[keyof paths]
>;
/**
 * Operations that POST what is too structured for a query string (a search's filter) and change
 * nothing: reads, made outside the unit of work, with a read scope in the document.
 */
export const readingPosts = ['searchTasks'] as const satisfies readonly OperationId[];
type ReadingPost = (typeof readingPosts)[number];
type WriteOperationId = Exclude<OperationsOf<ChangingMethod>, ReadingPost>;

/**
 * An operation is told by its shape in `paths`; one that would pass for both a change and a read
 * (or neither) is a compile error here rather than a handler given the wrong input.
 */
type Unclassified =
  | Extract<WriteOperationId, OperationsOf<ReadingMethod>>
  | Exclude<OperationId, WriteOperationId | OperationsOf<ReadingMethod> | ReadingPost>;
export const everyOperationIsAChangeOrARead: [Unclassified] extends [never] ? true : Unclassified =
  true;

export interface OperationInput<K extends OperationId> {
  principal: Principal;
  path: PathParams<K>;
  query: QueryParams<K>;
  headers: HeaderParams<K>;
  body: RequestBody<K>;
  /** The API version the request is made in (its `Api-Version`, else its key's). */
  apiVersion: ApiVersion;
  /** The transaction a change is made in; none for a read. */
  write: K extends WriteOperationId ? WriteContext : undefined;
  /** Aborts when the client leaves before its answer (made when first asked for). */
  clientGone: () => AbortSignal;
}

export type OperationHandler<K extends OperationId> = (
  input: OperationInput<K>,
) => Promise<Reply<K>>;
export type OperationHandlers = { [K in OperationId]: OperationHandler<K> };

/**
 * A check of a change made before its transaction opens, for what may wait on the network (a
 * DNS lookup) and must hold no database connection meanwhile; it throws to refuse the change.
 * It may hold something for the change (a bulk change's place among those running): it then
 * answers how to give it back, which is called once the change has answered, however it ended.
 */
export type OperationCheck<K extends OperationId> = (
  input: Omit<OperationInput<K>, 'write'> & CheckInput,
) => Promise<void | (() => Promise<void>)>;

/** What a check may do besides reading the request. */
export interface CheckInput {
  /**
   * Counts requests past this one against its key's quota (a bulk change counts one per 100
   * tasks): the answer's RateLimit header then says what is left after them all. Rejects with the
   * 429 problem past the quota; does nothing when rate limiting is off.
   */
  countMore(requests: number, why: string): Promise<void>;
}
export type OperationChecks = { [K in OperationId]?: OperationCheck<K> };

/** Marks query parameters that the document gives a default, so validation always fills them. */
export type Defaulted<Q, Keys extends keyof Q> = Q & Required<Pick<Q, Keys>>;

/** The reply for one resource: its representation, and its version for the ETag. */
export function replyWith<S extends 200 | 201, T>(status: S, { value, version }: Versioned<T>) {
  return { status, body: value, version };
}

export function found<T>(value: T | undefined, resource: ResourceName, id: string): T {
  if (value === undefined) throw new NotFoundError(resource, id);
  return value;
}

/** The reply to a delete: 204, or 404 when the tenant had no such resource. */
export function removed(wasThere: boolean, resource: ResourceName, id: string): { status: 204 } {
  if (!wasThere) throw new NotFoundError(resource, id);
  return { status: 204 };
}
