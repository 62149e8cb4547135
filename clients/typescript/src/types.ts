/** The document's schemas under their own names, and events typed by their `type`. */
import type { components } from './api';

type Schemas = components['schemas'];
export type Project = Schemas['Project'];
export type Task = Schemas['Task'];
export type Event = Schemas['Event'];
export type EventType = Schemas['EventType'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookDelivery = Schemas['WebhookDelivery'];

type EventOf<Type extends EventType, Data> = Omit<Event, 'type' | 'data'> & {
  type: Type;
  data: Data;
};

/**
 * An Event whose `data` is known from its `type`: narrowing on `event.type` gives a Project or a
 * Task, and on `*.updated` the fields that changed with their old values.
 */
export type TypedEvent =
  | EventOf<'project.created' | 'project.deleted', { object: Project }>
  | EventOf<'project.updated', { object: Project; previous: Partial<Project> }>
  | EventOf<'task.created' | 'task.deleted', { object: Task }>
  | EventOf<'task.updated', { object: Task; previous: Partial<Task> }>;

/** Every event type the document lists has its case in TypedEvent, and no other (a compile-time check). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
export const everyEventTypeIsTyped: Same<TypedEvent['type'], EventType> = true;
