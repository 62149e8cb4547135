/** The document's schemas under their own names, and events typed by their `type`. */
import type { components } from './api';

type Schemas = components['schemas'];
export type Project = Schemas['Project'];
export type Task = Schemas['Task'];
export type Event = Schemas['Event'];
export type EventType = Schemas['EventType'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookDelivery = Schemas['WebhookDelivery'];

/** `webhook_endpoint` → `WebhookEndpoint`: a resource, as the document names its schema. */
type SchemaName<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Capitalize<Head>}${SchemaName<Tail>}`
  : Capitalize<S>;
/** The object an event of `Type` carries: the schema its resource (`task` of `task.updated`) names. */
type ObjectOf<Type extends EventType> = Type extends `${infer Resource}.${string}`
  ? Schemas[SchemaName<Resource> & keyof Schemas]
  : never;
type DataOf<Type extends EventType> = Type extends `${string}.updated`
  ? { object: ObjectOf<Type>; previous: Partial<ObjectOf<Type>> }
  : { object: ObjectOf<Type> };

/**
 * An Event whose `data` is known from its `type`: narrowing on `event.type` gives a Project or a
 * Task, and on `*.updated` the fields that changed with their old values. Made from the document's
 * event types, so a new one is typed with no change here.
 */
export type TypedEvent = {
  [Type in EventType]: Omit<Event, 'type' | 'data'> & { type: Type; data: DataOf<Type> };
}[EventType];

/**
 * Every event type the document lists names a schema its `data.object` may be (a compile-time
 * check): one that does not is the type of this constant, and the error names it.
 */
type Untyped = {
  [Type in EventType]: [ObjectOf<Type>] extends [never]
    ? Type
    : ObjectOf<Type> extends Event['data']['object']
      ? never
      : Type;
}[EventType];
export const everyEventTypeIsTyped: [Untyped] extends [never] ? true : Untyped = true;
