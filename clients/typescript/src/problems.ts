/**
 * What the service answers when a request fails: an RFC 9457 problem document, thrown as a
 * ProblemError whose `type` is one of the document's problem types.
 */
import type { components } from './api';

/** The document's problem types, without their `/problems/` prefix. */
export const problemTypes = [
  'malformed-json',
  'malformed-request',
  'invalid-request',
  'invalid-cursor',
  'unsupported-api-version',
  'unauthenticated',
  'insufficient-scope',
  'not-found',
  'route-not-found',
  'method-not-allowed',
  'cursor-expired',
  'endpoint-disabled',
  'request-timeout',
  'idempotency-in-progress',
  'precondition-failed',
  'payload-too-large',
  'unsupported-media-type',
  'unknown-project',
  'unknown-event',
  'idempotency-key-reused',
  'limit-reached',
  'too-many-tasks',
  'headers-too-large',
  'rate-limited',
  'internal-error',
  'service-unavailable',
] as const;

export type ProblemType = (typeof problemTypes)[number];
export type Problem = components['schemas']['Problem'];
export type ValidationIssue = components['schemas']['ValidationIssue'];

/** A failed answer: the service's problem document, with its `type` one of the document's problem types. */
export class ProblemError extends Error {
  override readonly name = 'ProblemError';
  /** The kind of problem, without its `/problems/` prefix. */
  readonly type: ProblemType;
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  /** For `invalid-request`: each place with a problem. */
  readonly errors: ValidationIssue[];
  /** The X-Request-Id of the failed request, to quote to the service's operators. */
  readonly requestId: string | undefined;
  /** Seconds the service asked to wait before trying again (429, 503), when it said. */
  readonly retryAfter: number | undefined;
  /** The whole problem document, members beyond the standard ones included. */
  readonly problem: Problem & Record<string, unknown>;

  constructor(status: number, problem: Problem & Record<string, unknown>, headers?: Headers) {
    super(`${status} ${problem.title}: ${problem.detail}`);
    this.type = problem.type.replace(/^\/problems\//, '') as ProblemType;
    this.status = status;
    this.title = problem.title;
    this.detail = problem.detail;
    this.errors = problem.errors ?? [];
    this.requestId =
      (problem as { request_id?: string }).request_id ?? headers?.get('x-request-id') ?? undefined;
    const retryAfter = Number(headers?.get('retry-after'));
    this.retryAfter =
      headers?.has('retry-after') && Number.isFinite(retryAfter) ? retryAfter : undefined;
    this.problem = problem;
  }
}

/** Whether `error` is a ProblemError, of the given type when one is named. */
export function isProblem<Type extends ProblemType>(
  error: unknown,
  type?: Type,
): error is ProblemError & { type: Type } {
  return error instanceof ProblemError && (type === undefined || error.type === type);
}

/** The ProblemError for a failed answer; a body that is not a problem document still gives one, of its status. */
export function problemFrom(response: Response, body: unknown): ProblemError {
  const problem =
    body !== null && typeof body === 'object' && typeof (body as Problem).type === 'string'
      ? (body as Problem & Record<string, unknown>)
      : {
          type: response.status >= 500 ? '/problems/internal-error' : '/problems/invalid-request',
          title: response.statusText || `HTTP ${response.status}`,
          status: response.status,
          detail: typeof body === 'string' ? body : '',
        };
  return new ProblemError(response.status, problem, response.headers);
}
