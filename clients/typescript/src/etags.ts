/**
 * The ETags of what the kit returned: each project and task a get, create or update answered is
 * remembered with its ETag (in a WeakMap, so nothing is added to the object and nothing is kept
 * once the object is dropped), so a change can be made conditional on the object itself.
 */
const remembered = new WeakMap<object, string>();

/** Remembers the ETag an answer carried for the object it returned. */
export function rememberETag(object: unknown, response: Response): void {
  const etag = response.headers.get('etag');
  if (etag !== null && object !== null && typeof object === 'object') remembered.set(object, etag);
}

/** The ETag the service gave with `object` (a project or task the kit returned), or undefined. */
export function etagOf(object: object): string | undefined {
  return remembered.get(object);
}

/** An ETag as the service gave it (`"3"`), or an object the kit returned, standing for its ETag. */
export type ETagOrObject = string | object;

/** The header value for a condition; an object the kit holds no ETag for is a mistake, said at once. */
export function conditionValue(condition: ETagOrObject, option: string): string {
  if (typeof condition === 'string') return condition;
  const etag = remembered.get(condition);
  if (etag === undefined)
    throw new TypeError(
      `${option} was given an object the kit holds no ETag for: pass a project, task or webhook endpoint that get, create or update returned, or the ETag itself`,
    );
  return etag;
}
