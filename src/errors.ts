/**
 * The typed errors the layers below HTTP throw. `src/http/problems.ts` is the one place that
 * turns them into problem documents; anything else that reaches it is an unexpected fault.
 */

export class NotFoundError extends Error {
  constructor(readonly resource: 'project' | 'task' | 'webhook endpoint', readonly id: string) {
    super(`No ${resource} ${id} exists.`);
  }
}

/** A task was created for a project the caller's tenant does not have. */
export class UnknownProjectError extends Error {
  constructor(readonly projectId: string) {
    super(`No project ${projectId} exists.`);
  }
}

export class InvalidCursorError extends Error {
  constructor(reason: string) {
    super(`The cursor ${reason}; start again without one.`);
  }
}

/**
 * The database cannot be reached, dropped the connection or did not answer in time. A change
 * may or may not have been made: the connection can be lost after the COMMIT reached the server.
 */
export class DatabaseUnavailableError extends Error {
  constructor(cause: unknown) {
    super('The database cannot be reached.', { cause });
  }
}

/** An If-Match condition names none of the resource's current versions; nothing changed. */
export class PreconditionFailedError extends Error {
  constructor(resource: 'project' | 'task') {
    super(`The ${resource} has changed since the ETag you sent; read it again and retry.`);
  }
}

/**
 * Another request bound this Idempotency-Key to its answer while this one ran; this one's
 * changes were rolled back, and the other's answer is the one to give.
 */
export class IdempotencyKeyTakenError extends Error {
  constructor() {
    super('The Idempotency-Key was bound by another request meanwhile.');
  }
}

/** A request with the same Idempotency-Key is still running and has not let go of the key in time. */
export class IdempotencyKeyBusyError extends Error {
  constructor() {
    super('A request with this Idempotency-Key is still running; retry shortly.');
  }
}

/** An event cursor points before the oldest kept event: events after it are gone. */
export class CursorExpiredError extends Error {
  constructor() {
    super("Events after this cursor's position are no longer kept; read the resources again, then follow the feed anew.");
  }
}

/** A redelivery named an event the caller's tenant does not have, or no longer keeps. */
export class UnknownEventError extends Error {
  constructor(readonly eventId: string) {
    super(`No kept event ${eventId} exists.`);
  }
}

/**
 * A field the schema accepts, refused for what it means (a webhook URL whose host is an internal
 * address): an invalid request that names the field.
 */
export class InvalidFieldError extends Error {
  constructor(
    readonly pointer: string,
    readonly reason: string,
  ) {
    super(`The request is not acceptable: body ${pointer} ${reason}.`);
  }
}
