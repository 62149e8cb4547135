/**
 * One change that a released version must not see, modelled on Cadwyn's `VersionChange`: it says
 * in one place what changed and how to go between the version that introduced it and the one
 * before. Each is a module of src/versions/changes/, listed in its version in versions.ts.
 */

export type Json = null | boolean | number | string | Json[] | JsonObject;
export type JsonObject = { [key: string]: Json };

/** A request as a version's client sent it, already valid against that version's document. */
export interface VersionedRequest {
  /** The operation's `operationId` in the document. */
  operationId: string;
  /** The query parameters, each with every value it was given, in order. */
  query: Record<string, string[]>;
  /** The parsed JSON body; undefined when there is none. */
  body: Json | undefined;
}

/** An answer as the service gives it: the status and the parsed JSON body (problems included). */
export interface VersionedAnswer {
  operationId: string;
  status: number;
  /** Undefined for an answer without a body (204, 304). */
  body: Json | undefined;
}

/**
 * Each function receives a value it owns (a deep copy, or the result of the previous change): it
 * may change it in place, and returns what it made of it.
 */
export interface VersionChange {
  /** The changelog's sentence, as `GET /versions` lists it for the version that made the change. */
  readonly sentence: string;
  /** The newer version's OpenAPI document (plain JSON) made into the older's: how it looked before. */
  document(newer: JsonObject): JsonObject;
  /** A request of the older version made into one of the newer ("up"); absent: unchanged. */
  request?(older: VersionedRequest): VersionedRequest;
  /** An answer of the newer version made into one of the older ("down"); absent: unchanged. */
  answer?(newer: VersionedAnswer): VersionedAnswer;
  /** An event (as the feed lists it: `event_id`, `type`, `data`, …) of the newer made into the older's. */
  event?(newer: JsonObject): JsonObject;
}

/** The object at a JSON pointer (`/components/schemas/Task`), or an error naming the pointer. */
export function objectAt(document: JsonObject, pointer: string): JsonObject {
  let at: Json = document;
  for (const segment of pointer.split('/').slice(1)) {
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
    at = at !== null && typeof at === 'object' ? ((at as JsonObject)[key] ?? null) : null;
  }
  if (at === null || typeof at !== 'object' || Array.isArray(at))
    throw new Error(`no object at ${pointer}`);
  return at;
}

/**
 * Removes a value from the enum of the schema at `pointer`. It fails when the value is not there,
 * so a change whose document no longer matches the newest fails loudly rather than doing nothing.
 */
export function removeEnumValue(document: JsonObject, pointer: string, value: Json): void {
  const schema = objectAt(document, pointer);
  const values = Array.isArray(schema.enum) ? schema.enum : [];
  if (!values.includes(value)) throw new Error(`${pointer} has no enum value ${String(value)}`);
  schema.enum = values.filter((other) => other !== value);
}

/** Removes a property (and its place in `required`) from the object schema at `pointer`. */
export function removeProperty(document: JsonObject, pointer: string, property: string): void {
  const schema = objectAt(document, pointer);
  const properties = schema.properties as JsonObject | undefined;
  if (properties?.[property] === undefined)
    throw new Error(`${pointer} has no property ${property}`);
  delete properties[property];
  if (Array.isArray(schema.required)) {
    schema.required = schema.required.filter((name) => name !== property);
    if (schema.required.length === 0) delete schema.required;
  }
}

/** Calls `visit` on every object within `value`, itself included, outermost first. */
export function eachObject(value: Json | undefined, visit: (object: JsonObject) => void): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) eachObject(item, visit);
    return;
  }
  visit(value);
  for (const inner of Object.values(value)) eachObject(inner, visit);
}

/**
 * Calls `visit` on every object within the document's examples (`example`, and the `value` of
 * each of `examples`), so a change can make them what the older version sent: its mock answers
 * with them.
 */
export function eachExampleObject(document: JsonObject, visit: (object: JsonObject) => void): void {
  eachObject(document, (object) => {
    if ('example' in object) eachObject(object.example, visit);
    const examples = object.examples;
    if (examples !== null && typeof examples === 'object' && !Array.isArray(examples))
      for (const example of Object.values(examples))
        if (example !== null && typeof example === 'object' && !Array.isArray(example))
          eachObject(example.value, visit);
  });
}

/** A JSON value that is an object (not an array, not null). */
export const isObject = (value: Json | undefined): value is JsonObject =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Where the answers of each operation carry tasks. */
const tasksOfOperation: Record<string, (body: JsonObject) => Json[]> = {
  createTask: (task) => [task],
  getTask: (task) => [task],
  updateTask: (task) => [task],
  listProjectTasks: (page) => (Array.isArray(page.data) ? page.data : []),
};

/**
 * Calls `visit` on each task a successful answer carries, and on each event of a feed page
 * (listEvents), so that a change to tasks says once what it does to one task and one event.
 */
export function eachTaskOfAnswer(
  answer: VersionedAnswer,
  visitTask: (task: JsonObject) => void,
  visitEvent: (event: JsonObject) => void,
): void {
  const body = answer.body;
  if (!isObject(body) || answer.status >= 300) return;
  if (answer.operationId === 'listEvents') {
    if (Array.isArray(body.data))
      for (const event of body.data) if (isObject(event)) visitEvent(event);
    return;
  }
  for (const task of tasksOfOperation[answer.operationId]?.(body) ?? [])
    if (isObject(task)) visitTask(task);
}

/** Where the answers of each operation carry webhook endpoints. */
const endpointsOfOperation: Record<string, (body: JsonObject) => Json[]> = {
  createWebhookEndpoint: (endpoint) => [endpoint],
  getWebhookEndpoint: (endpoint) => [endpoint],
  updateWebhookEndpoint: (endpoint) => [endpoint],
  listWebhookEndpoints: (page) => (Array.isArray(page.data) ? page.data : []),
};

/** Calls `visit` on each webhook endpoint a successful answer carries. */
export function eachEndpointOfAnswer(
  answer: VersionedAnswer,
  visit: (endpoint: JsonObject) => void,
): void {
  const body = answer.body;
  if (!isObject(body) || answer.status >= 300) return;
  for (const endpoint of endpointsOfOperation[answer.operationId]?.(body) ?? [])
    if (isObject(endpoint)) visit(endpoint);
}

/**
 * Calls `visit` on a task event's task and on the fields its update changed (`data.previous`);
 * a project's event is left alone.
 */
export function eachTaskOfEvent(event: JsonObject, visit: (task: JsonObject) => void): void {
  if (typeof event.type !== 'string' || !event.type.startsWith('task.')) return;
  const data = event.data;
  if (!isObject(data)) return;
  if (isObject(data.object)) visit(data.object);
  if (isObject(data.previous)) visit(data.previous);
}
