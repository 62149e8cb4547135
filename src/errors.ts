/**
 * Errors that describe themselves: each carries the problem it is (its kind, and what the problem
 * document says besides the detail), so `src/http/problems.ts` turns any of them into a problem
 * document without knowing them one by one. Anything else that reaches it is an unexpected fault.
 */
import type { components, operations } from '../generated/api';

type ValidationIssue = components['schemas']['ValidationIssue'];

/** Every problem the document lists: its HTTP status and title. */
export const problemTable = {
  'malformed-json': { status: 400, title: 'Malformed JSON' },
  'malformed-request': { status: 400, title: 'Malformed request' },
  'invalid-request': { status: 400, title: 'Invalid request' },
  'invalid-cursor': { status: 400, title: 'Invalid cursor' },
  'unsupported-api-version': { status: 400, title: 'Unsupported API version' },
  unauthenticated: { status: 401, title: 'Unauthenticated' },
  'insufficient-scope': { status: 403, title: 'Insufficient scope' },
  'not-found': { status: 404, title: 'Not found' },
  'route-not-found': { status: 404, title: 'Route not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'cursor-expired': { status: 410, title: 'Cursor expired' },
  'request-timeout': { status: 408, title: 'Request timeout' },
  'idempotency-in-progress': { status: 409, title: 'Request in progress' },
  'endpoint-disabled': { status: 409, title: 'Endpoint disabled' },
  'precondition-failed': { status: 412, title: 'Precondition failed' },
  'payload-too-large': { status: 413, title: 'Payload too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'unknown-project': { status: 422, title: 'Unknown project' },
  'unknown-event': { status: 422, title: 'Unknown event' },
  'idempotency-key-reused': { status: 422, title: 'Idempotency key reused' },
  'limit-reached': { status: 422, title: 'Limit reached' },
  'too-many-tasks': { status: 422, title: 'Too many tasks' },
  'headers-too-large': { status: 431, title: 'Request header fields too large' },
  'rate-limited': { status: 429, title: 'Too many requests' },
  'internal-error': { status: 500, title: 'Internal error' },
  'service-unavailable': { status: 503, title: 'Service unavailable' },
} as const;

export type ProblemKind = keyof typeof problemTable;

/** What a problem document carries besides its type, title, status and detail. */
export interface ProblemExtra {
  headers?: Record<string, string>;
  errors?: ValidationIssue[];
  errorsNotListed?: number;
  limit?: number;
  /** How many tasks a bulk change named (too-many-tasks). */
  matched?: number;
  latestCursor?: string;
}

/** The names of the path parameters the document's operations take. */
type PathParameterName = {
  [K in keyof operations]: KeysOf<operations[K]['parameters']['path']>;
}[keyof operations];
type KeysOf<P> = P extends Record<string, unknown> ? keyof P & string : never;
type Spaced<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head} ${Spaced<Tail>}`
  : S;

/**
 * The resources a tenant owns, as errors name them: each one the document addresses by an id in
 * a path (`webhook_endpoint_id` names a "webhook endpoint"), so a new resource needs no entry here.
 */
export type ResourceName = PathParameterName extends `${infer Resource}_id`
  ? Spaced<Resource>
  : never;

/**
 * An error that is a problem for the client: its kind, its detail (the message, unless the client
 * is told something else than the log), and the rest of the problem document.
 */
export class ProblemError extends Error {
  readonly detail: string;
  constructor(
    readonly kind: ProblemKind,
    message: string,
    readonly extra: ProblemExtra = {},
    options: ErrorOptions & { detail?: string } = {},
  ) {
    super(message, options);
    this.detail = options.detail ?? message;
  }
}

export class NotFoundError extends ProblemError {
  constructor(
    readonly resource: ResourceName,
    readonly id: string,
  ) {
    super('not-found', `No ${resource} ${id} exists.`);
  }
}

/** A task was created for a project the caller's tenant does not have. */
export class UnknownProjectError extends ProblemError {
  constructor(readonly projectId: string) {
    super('unknown-project', `No project ${projectId} exists.`);
  }
}

export class InvalidCursorError extends ProblemError {
  constructor(reason: string) {
    super('invalid-cursor', `The cursor ${reason}; start again without one.`);
  }
}

/** Seconds a client is asked to wait when the database is unreachable. */
const databaseRetryAfterSeconds = 5;

/**
 * The connection can be lost after a COMMIT reached the database, so whether a change was made
 * is not known; an Idempotency-Key makes the retry safe either way.
 */
const databaseUnavailableDetail =
  'The database could not be reached or stopped answering. A change this request asked for may or may not have been made: ' +
  'retry it with the same Idempotency-Key to be safe, or read the resource first.';

/**
 * The database cannot be reached, dropped the connection or did not answer in time. A change
 * may or may not have been made: the connection can be lost after the COMMIT reached the server.
 */
export class DatabaseUnavailableError extends ProblemError {
  constructor(cause: unknown) {
    super(
      'service-unavailable',
      'The database cannot be reached.',
      { headers: { 'Retry-After': String(databaseRetryAfterSeconds) } },
      { cause, detail: databaseUnavailableDetail },
    );
  }
}

/** An If-Match condition names none of the resource's current versions; nothing changed. */
export class PreconditionFailedError extends ProblemError {
  constructor(resource: ResourceName) {
    super(
      'precondition-failed',
      `The ${resource} has changed since the ETag you sent; read it again and retry.`,
    );
  }
}

/** The Idempotency-Key is bound to another operation or body; nothing ran. */
export class IdempotencyKeyReusedError extends ProblemError {
  constructor() {
    super(
      'idempotency-key-reused',
      'This Idempotency-Key was used with another request body or API version; use a new key for a new request.',
    );
  }
}

/**
 * Another request bound this Idempotency-Key to its answer while this one ran; this one's
 * changes were rolled back, and the other's answer is the one to give.
 */
export class IdempotencyKeyTakenError extends Error {
  /** The database's duplicate-key error. */
  declare readonly cause: unknown;
  constructor(options: ErrorOptions) {
    super('The Idempotency-Key was bound by another request meanwhile.', options);
  }
}

/** A request with the same Idempotency-Key is still running and has not let go of the key in time. */
export class IdempotencyKeyBusyError extends ProblemError {
  constructor() {
    super(
      'idempotency-in-progress',
      'A request with this Idempotency-Key is still running; retry shortly.',
    );
  }
}

/**
 * An event cursor names a position the feed cannot continue from: events after it are gone
 * (retention), or it is past the tenant's newest numbered event, so this feed never gave it
 * (a restored database, another deployment or tenant). Either way the consumer resynchronises
 * from `latestCursor`, the head when this was found.
 */
export class CursorExpiredError extends ProblemError {
  constructor(
    readonly reason: 'removed' | 'ahead',
    readonly latestCursor: string,
  ) {
    super(
      'cursor-expired',
      reason === 'removed'
        ? "Events after this cursor's position are no longer kept; take latest_cursor, read the resources again, then follow the feed from latest_cursor."
        : 'This cursor is past the newest event of this feed, so this feed did not give it (a restored database, another deployment or another tenant); take latest_cursor, read the resources again, then follow the feed from latest_cursor.',
      { latestCursor },
    );
  }
}

/** A query parameter or header that the schema accepts but that cannot be used as sent. */
export class InvalidParameterError extends ProblemError {
  constructor(
    readonly location: 'query' | 'header',
    readonly parameter: string,
    readonly reason: string,
  ) {
    super('invalid-request', `The request is not acceptable: ${location} ${parameter} ${reason}.`, {
      errors: [{ in: location, name: parameter, message: reason }],
    });
  }
}

/** A redelivery named an event the caller's tenant does not have, or no longer keeps. */
export class UnknownEventError extends ProblemError {
  constructor(readonly eventId: string) {
    super('unknown-event', `No kept event ${eventId} exists.`);
  }
}

/** A redelivery to a disabled webhook endpoint: it would wait unsent until enabled, so it is refused. */
export class EndpointDisabledError extends ProblemError {
  constructor(readonly endpointId: string) {
    super(
      'endpoint-disabled',
      `Webhook endpoint ${endpointId} is disabled; enable it before asking for a redelivery.`,
    );
  }
}

/** A key revoked or expired while its request waited (a long poll): refused as it would be now. */
export class KeyNoLongerValidError extends ProblemError {
  constructor() {
    const detail = 'The API key was revoked or expired while this request waited.';
    super('unauthenticated', detail, {
      headers: {
        'WWW-Authenticate': `Bearer realm="task-tracker", error="invalid_token", error_description="${detail}"`,
      },
    });
  }
}

/** The tenant has as many webhook endpoints as it may have; nothing was registered. */
export class LimitReachedError extends ProblemError {
  constructor(readonly limit: number) {
    super(
      'limit-reached',
      `This tenant has ${limit} webhook endpoints, the most it may have; delete one to register another.`,
      { limit },
    );
  }
}

/**
 * A field the schema accepts, refused for what it means (a webhook URL whose host is an internal
 * address): an invalid request that names the field.
 */
export class InvalidFieldError extends ProblemError {
  constructor(
    readonly pointer: string,
    readonly reason: string,
  ) {
    super('invalid-request', `The request is not acceptable: body ${pointer} ${reason}.`, {
      errors: [{ in: 'body', pointer, message: reason }],
    });
  }
}

/** The most tasks one bulk change takes (contract-decisions: "Bulk changes"). */
export const bulkTaskLimit = 1000;

/** A bulk change named more tasks than it may; nothing changed. */
export class TooManyTasksError extends ProblemError {
  constructor(readonly matched: number) {
    super(
      'too-many-tasks',
      `The request names ${matched} tasks; a bulk change takes at most ${bulkTaskLimit}. Split it into several.`,
      { limit: bulkTaskLimit, matched },
    );
  }
}

/** A bulk change would give a task more labels than a task may have; nothing changed. */
export class TooManyLabelsError extends ProblemError {
  constructor(
    readonly taskId: string,
    labels: number,
    readonly limit: number,
  ) {
    super(
      'limit-reached',
      `Task ${taskId} would have ${labels} labels; a task has at most ${limit}. Nothing was changed.`,
      { limit },
    );
  }
}
