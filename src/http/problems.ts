/**
 * The one place where errors become RFC 9457 problem documents. Every kind of problem the
 * document lists is here; anything unrecognised is a 500 that says nothing of the cause.
 */
import type { components } from '../../generated/api';
import { CursorExpiredError, DatabaseUnavailableError, IdempotencyKeyBusyError, InvalidCursorError, InvalidFieldError, InvalidParameterError, LimitReachedError, NotFoundError, PreconditionFailedError, UnknownEventError, UnknownProjectError } from '../errors';
import type { HttpReply } from './http-reply';

type Problem = components['schemas']['Problem'];
type ValidationIssue = components['schemas']['ValidationIssue'];

const kinds = {
  'malformed-json': { status: 400, title: 'Malformed JSON' },
  'malformed-request': { status: 400, title: 'Malformed request' },
  'invalid-request': { status: 400, title: 'Invalid request' },
  'invalid-cursor': { status: 400, title: 'Invalid cursor' },
  unauthenticated: { status: 401, title: 'Unauthenticated' },
  'insufficient-scope': { status: 403, title: 'Insufficient scope' },
  'not-found': { status: 404, title: 'Not found' },
  'route-not-found': { status: 404, title: 'Route not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'cursor-expired': { status: 410, title: 'Cursor expired' },
  'request-timeout': { status: 408, title: 'Request timeout' },
  'idempotency-in-progress': { status: 409, title: 'Request in progress' },
  'precondition-failed': { status: 412, title: 'Precondition failed' },
  'payload-too-large': { status: 413, title: 'Payload too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'unknown-project': { status: 422, title: 'Unknown project' },
  'unknown-event': { status: 422, title: 'Unknown event' },
  'idempotency-key-reused': { status: 422, title: 'Idempotency key reused' },
  'limit-reached': { status: 422, title: 'Limit reached' },
  'headers-too-large': { status: 431, title: 'Request header fields too large' },
  'rate-limited': { status: 429, title: 'Too many requests' },
  'internal-error': { status: 500, title: 'Internal error' },
  'service-unavailable': { status: 503, title: 'Service unavailable' },
} as const;

export type ProblemKind = keyof typeof kinds;
export const problemKinds = Object.keys(kinds) as ProblemKind[];
export const problemTitle = (kind: ProblemKind): string => kinds[kind].title;

/** The document's maxLength for `detail`: a detail can quote what the client sent. */
const maxDetailLength = 4096;

export function clamp(text: string, maxLength: number): string {
  return [...text].length <= maxLength ? text : [...text].slice(0, maxLength - 1).join('') + '…';
}

/**
 * The connection can be lost after a COMMIT reached the database, so whether a change was made
 * is not known; an Idempotency-Key makes the retry safe either way.
 */
const databaseUnavailableDetail =
  'The database could not be reached or stopped answering. A change this request asked for may or may not have been made: ' +
  'retry it with the same Idempotency-Key to be safe, or read the resource first.';

/** Seconds a client is asked to wait when the database is unreachable. */
const retryAfterSeconds = 5;

/** An error that already knows which problem it is: thrown by the HTTP layer itself. */
export class ProblemError extends Error {
  constructor(
    readonly kind: ProblemKind,
    detail: string,
    readonly extra: { headers?: Record<string, string>; errors?: ValidationIssue[]; errorsNotListed?: number; limit?: number; latestCursor?: string } = {},
  ) {
    super(detail);
  }
}

function problemReply(kind: ProblemKind, detail: string, extra: ProblemError['extra'] = {}): HttpReply {
  const { status, title } = kinds[kind];
  const problem: Problem = { type: `/problems/${kind}`, title, status, detail: clamp(detail, maxDetailLength) };
  if (extra.errors) problem.errors = extra.errors;
  if (extra.errorsNotListed) problem.errors_not_listed = extra.errorsNotListed;
  if (extra.limit !== undefined) problem.limit = extra.limit;
  if (extra.latestCursor !== undefined) problem.latest_cursor = extra.latestCursor;
  return { status, body: problem, contentType: 'application/problem+json', headers: extra.headers ?? {} };
}

/** express.json()'s errors carry a `type`; see body-parser's README. */
function bodyParserProblem(error: { type: string; message: string; limit?: number }): HttpReply {
  switch (error.type) {
    case 'entity.parse.failed':
      return problemReply('malformed-json', 'The request body is not valid JSON.');
    case 'entity.verify.failed':
      return problemReply('malformed-json', error.message);
    case 'entity.too.large':
      return problemReply('payload-too-large', `The request body is over the limit of ${error.limit} bytes.`);
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return problemReply('unsupported-media-type', error.message);
    default:
      return problemReply('malformed-json', `The request body could not be read: ${error.message}`);
  }
}

export function problemFor(error: unknown): HttpReply {
  if (error instanceof ProblemError) return problemReply(error.kind, error.message, error.extra);
  if (error instanceof NotFoundError) return problemReply('not-found', error.message);
  if (error instanceof UnknownProjectError) return problemReply('unknown-project', error.message);
  if (error instanceof UnknownEventError) return problemReply('unknown-event', error.message);
  if (error instanceof LimitReachedError) return problemReply('limit-reached', error.message, { limit: error.limit });
  if (error instanceof InvalidFieldError) return problemReply('invalid-request', error.message, { errors: [{ in: 'body', pointer: error.pointer, message: error.reason }] });
  if (error instanceof InvalidCursorError) return problemReply('invalid-cursor', error.message);
  if (error instanceof InvalidParameterError) return problemReply('invalid-request', error.message, { errors: [{ in: error.location, name: error.parameter, message: error.reason }] });
  if (error instanceof CursorExpiredError) return problemReply('cursor-expired', error.message, { latestCursor: error.latestCursor });
  if (error instanceof PreconditionFailedError) return problemReply('precondition-failed', error.message);
  if (error instanceof IdempotencyKeyBusyError) return problemReply('idempotency-in-progress', error.message);
  if (error instanceof DatabaseUnavailableError) {
    return problemReply('service-unavailable', databaseUnavailableDetail, {
      headers: { 'Retry-After': String(retryAfterSeconds) },
    });
  }
  // The body parser's errors (http-errors objects): what the client sent could not be read.
  const bodyError = error as { type?: unknown; status?: unknown; expose?: unknown; message: string } | null;
  if (bodyError?.expose === true && typeof bodyError.status === 'number' && bodyError.status < 500) {
    return bodyParserProblem({ type: String(bodyError.type), message: bodyError.message, limit: (bodyError as { limit?: number }).limit });
  }
  return problemReply('internal-error', 'Something went wrong on our side; nothing was changed.');
}
