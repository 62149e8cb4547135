/**
 * The document's schemas under their own names, and events typed by their `type`, in each API
 * version: `Task<'2026-12-15'>` is a task as version 2026-12-15 answers it. Without a version
 * argument each is the default version's, `2026-11-28` (the version a client is in when its
 * program names none), as they were before versions: `Task` is `Task<'2026-11-28'>`.
 */
import type {
  ApiVersion,
  ComponentsOf,
  DefaultApiVersion,
  NewestApiVersion,
  PlanningVersion,
} from './versions';

type Schemas<V extends ApiVersion> = ComponentsOf<V>['schemas'];
/** A project, as version `V` (default `2026-11-28`) answers it. */
export type Project<V extends ApiVersion = DefaultApiVersion> = Schemas<V>['Project'];
/** A task, as version `V` (default `2026-11-28`: no `completed_at`, no `cancelled`) answers it. */
export type Task<V extends ApiVersion = DefaultApiVersion> = Schemas<V>['Task'];
/** An event of the feed, as version `V` (default `2026-11-28`) renders it. */
export type Event<V extends ApiVersion = DefaultApiVersion> = Schemas<V>['Event'];
export type EventType<V extends ApiVersion = DefaultApiVersion> = Schemas<V>['EventType'];
/** A webhook endpoint, as version `V` (default `2026-11-28`: no `api_version`) answers it. */
export type WebhookEndpoint<V extends ApiVersion = DefaultApiVersion> =
  Schemas<V>['WebhookEndpoint'];
export type WebhookDelivery<V extends ApiVersion = DefaultApiVersion> =
  Schemas<V>['WebhookDelivery'];

type KeysOfAny<U> = U extends unknown ? keyof U : never;
/** Each member of `U` with every other member's keys forbidden: exactly one member's keys. */
type OneOf<U, Keys extends PropertyKey = KeysOfAny<U>> = U extends unknown
  ? U & { [K in Exclude<Keys, keyof U>]?: never }
  : never;
type Combinator = { all: unknown } | { any: unknown } | { not: unknown };

/**
 * A filter of tasks in version `V` (`2026-12-15`, the first that has one), the document's
 * `TaskFilter`: a misspelt field or operator, a value outside its schema, or two fields in one
 * object is a compile error where it is written. `{ all: [{ priority: { gte: 'high' } }, …] }`.
 */
export type TaskFilter<V extends PlanningVersion = NewestApiVersion> = OneOf<
  | { all: TaskFilter<V>[] }
  | { any: TaskFilter<V>[] }
  | { not: TaskFilter<V> }
  | Exclude<Schemas<V>['TaskFilter'], Combinator>
>;
/** What a bulk change matched and changed (for a dry run: would change), as version `V` answers it. */
export type TaskBulkResult<V extends PlanningVersion = NewestApiVersion> =
  Schemas<V>['TaskBulkResult'];

/** `webhook_endpoint` → `WebhookEndpoint`: a resource, as the document names its schema. */
type SchemaName<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Capitalize<Head>}${SchemaName<Tail>}`
  : Capitalize<S>;
/** The object an event of `Type` carries: the schema its resource (`task` of `task.updated`) names. */
type ObjectOf<
  V extends ApiVersion,
  Type extends EventType<V>,
> = Type extends `${infer Resource}.${string}`
  ? Schemas<V>[SchemaName<Resource> & keyof Schemas<V>]
  : never;
type DataOf<V extends ApiVersion, Type extends EventType<V>> = Type extends `${string}.updated`
  ? { object: ObjectOf<V, Type>; previous: Partial<ObjectOf<V, Type>> }
  : { object: ObjectOf<V, Type> };

/**
 * An Event whose `data` is known from its `type`: narrowing on `event.type` gives a Project or a
 * Task, and on `*.updated` the fields that changed with their old values. Made from the document's
 * event types, so a new one is typed with no change here. `TypedEvent<'2026-12-15'>` is an event
 * as that version renders it; without a version argument, `2026-11-28`'s.
 */
export type TypedEvent<V extends ApiVersion = DefaultApiVersion> = {
  [Type in EventType<V>]: Omit<Event<V>, 'type' | 'data'> & { type: Type; data: DataOf<V, Type> };
}[EventType<V>];

/**
 * Every event type each version's document lists names a schema its `data.object` may be (a
 * compile-time check): one that does not is the type of this constant, and the error names it.
 */
type Untyped<V extends ApiVersion> = {
  [Type in EventType<V>]: [ObjectOf<V, Type>] extends [never]
    ? Type
    : ObjectOf<V, Type> extends Event<V>['data']['object']
      ? never
      : Type;
}[EventType<V>];
type UntypedInAnyVersion = { [V in ApiVersion]: Untyped<V> }[ApiVersion];
export const everyEventTypeIsTyped: [UntypedInAnyVersion] extends [never]
  ? true
  : UntypedInAnyVersion = true;
