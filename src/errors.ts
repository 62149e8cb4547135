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

/**
 * An event cursor names a position the feed cannot continue from: events after it are gone
 * (retention), or it is past the tenant's newest numbered event, so this feed never gave it
 * (a restored database, another deployment or tenant). Either way the consumer resynchronises
 * from `latestCursor`, the head when this was found.
 */
export class CursorExpiredError extends Error {
  constructor(
    readonly reason: 'removed' | 'ahead',
    readonly latestCursor: string,
  ) {
    super(
      reason === 'removed'
        ? "Events after this cursor's position are no longer kept; take latest_cursor, read the resources again, then follow the feed from latest_cursor."
        : "This cursor is past the newest event of this feed, so this feed did not give it (a restored database, another deployment or another tenant); take latest_cursor, read the resources again, then follow the feed from latest_cursor.",
    );
  }
}

/** A query parameter or header that the schema accepts but that cannot be used as sent. */
export class InvalidParameterError extends Error {
  constructor(
    readonly location: 'query' | 'header',
    readonly parameter: string,
    readonly reason: string,
  ) {
    super(`The request is not acceptable: ${location} ${parameter} ${reason}.`);
  }
}

/** A redelivery named an event the caller's tenant does not have, or no longer keeps. */
export class UnknownEventError extends Error {
  constructor(readonly eventId: string) {
    super(`No kept event ${eventId} exists.`);
  }
}

/** The tenant has as many webhook endpoints as it may have; nothing was registered. */
export class LimitReachedError extends Error {
  constructor(readonly limit: number) {
    super(`This tenant has ${limit} webhook endpoints, the most it may have; delete one to register another.`);
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
