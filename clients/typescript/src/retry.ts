/**
 * Retries, as a fetch that openapi-fetch calls once per call. A request is tried again only when
 * trying again cannot make a change twice:
 * - a refusal that says nothing was done (429, and 409 while a request with the same
 *   Idempotency-Key still runs) is retried for any request;
 * - a lost answer (a network error or a timeout) and 503 (the change may or may not have been
 *   made) are retried only for reads, for POSTs that carry an Idempotency-Key (the service replays
 *   the first answer), for a PATCH or DELETE with If-Match, and for a DELETE; a search, a read
 *   sent as a POST, goes through a fetch made with `reads` and is retried as a read.
 * The key is the request's own, sent again on every attempt: the kit's calls give one to every
 * POST the document lets carry one (client.ts), so no list of paths is kept here.
 * After a lost answer a retry's refusal may be the first attempt's own doing, so it is told as
 * what is known (the outcome in the `Task-Tracker-Client-Outcome` header of the answer returned):
 * - a DELETE whose retry finds 404 answers 204, `deleted-or-already-absent`: the lost attempt
 *   deleted it, or there was nothing to delete;
 * - a PATCH whose retry meets 412 reads the resource: when it already is what the change asked
 *   for, that read is answered as the change's 200 (`already-applied`); otherwise a 412 whose
 *   detail says the first attempt's outcome is unknown (`unknown`).
 */

export interface RetryPolicy {
  /** Attempts after the first. */
  maxRetries: number;
  /** The longest one attempt may take; a long poll gets its `wait` on top. */
  timeoutMs: number;
  /** The first backoff; each retry doubles it, up to maxDelayMs, with jitter. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the answer is returned as it is. */
  maxRetryAfterMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxRetries: 3,
  timeoutMs: 30_000,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  maxRetryAfterMs: 60_000,
};

/** A backoff before retry `retry` (0 for the first): exponential, capped, with full jitter over its upper half. */
export function backoffMs(
  retry: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** Retry-After in milliseconds (delta-seconds or an HTTP date), or undefined. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * What kind of request this is, for what may be retried. `reads` marks a POST that changes
 * nothing (a search), which is retried as a GET is.
 */
export function requestKind(
  request: Request,
  reads = false,
): {
  keyed: boolean;
  survivesLostAnswer: boolean;
  isDelete: boolean;
  isPatch: boolean;
} {
  const keyed = request.method === 'POST' && request.headers.has('idempotency-key');
  const conditional = request.headers.has('if-match');
  const survivesLostAnswer =
    reads ||
    request.method === 'GET' ||
    request.method === 'HEAD' ||
    keyed ||
    request.method === 'DELETE' ||
    (request.method === 'PATCH' && conditional);
  return {
    keyed,
    survivesLostAnswer,
    isDelete: request.method === 'DELETE',
    isPatch: request.method === 'PATCH',
  };
}

/** The seconds a feed request may be held by the service (`wait`), which its timeout adds. */
function heldForMs(request: Request): number {
  const url = new URL(request.url);
  if (url.pathname !== '/v1/events') return 0;
  const wait = Number(url.searchParams.get('wait') ?? 0);
  return Number.isFinite(wait) ? wait * 1000 : 0;
}

const sleep = (ms: number, signal?: AbortSignal | null) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });

async function problemType(response: Response): Promise<string | undefined> {
  if (!(response.headers.get('content-type') ?? '').includes('json')) return undefined;
  try {
    return ((await response.clone().json()) as { type?: string }).type;
  } catch {
    return undefined;
  }
}

/**
 * A request whose answer never came (a network failure or a timeout) and that the kit does not
 * send again: the service may or may not have handled it, and the message says so.
 */
export class AnswerLostError extends Error {
  override readonly name = 'AnswerLostError';
  /** Whether the service handled the request is not known. */
  readonly outcomeUnknown = true;
  constructor(request: Request, cause: unknown, retried: boolean, reads = false) {
    const { pathname } = new URL(request.url);
    const why =
      cause instanceof Error
        ? (cause.cause instanceof Error ? cause.cause : cause).message
        : String(cause);
    super(
      reads || request.method === 'GET' || request.method === 'HEAD'
        ? `No answer to ${request.method} ${pathname} (${why})${retried ? ' after every retry' : ''}.`
        : `The answer to ${request.method} ${pathname} was lost (${why})${retried ? ' on every retry' : ''}: whether the service made the change is unknown. ${
            request.method === 'PATCH' && !retried
              ? 'Read the resource to see; a change sent with ifMatch is retried safely.'
              : 'Read the resource to see.'
          }`,
      { cause },
    );
  }
}

/** The header of an answer the kit made from what it found after a lost answer (see above). */
export const outcomeHeader = 'task-tracker-client-outcome';

/** Whether `current` holds every member of `patch` with the same value (JSON equality). */
export function holdsPatch(
  current: Record<string, unknown>,
  patch: Record<string, unknown>,
): boolean {
  const same = (a: unknown, b: unknown): boolean => {
    if (a === b) return true;
    if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].every((key) =>
      same((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
    );
  };
  return Object.entries(patch).every(([key, value]) => same(current[key], value));
}

/**
 * The answer to a PATCH whose retry met 412 after a lost answer: the resource read again, as the
 * change's answer when it holds the change, else a 412 saying the outcome is unknown.
 */
async function afterRefusedRetry(
  request: Request,
  refusal: Response,
  fetchImpl: (request: Request) => Promise<Response>,
  timeoutMs: number,
): Promise<Response> {
  let patch: Record<string, unknown>;
  try {
    patch = (await request.clone().json()) as Record<string, unknown>;
  } catch {
    return refusal;
  }
  const headers = new Headers(request.headers);
  for (const name of ['if-match', 'content-type', 'content-length', 'idempotency-key'])
    headers.delete(name);
  let current: Response | undefined;
  try {
    current = await fetchImpl(
      new Request(request.url, {
        method: 'GET',
        headers,
        signal: request.signal
          ? AbortSignal.any([request.signal, AbortSignal.timeout(timeoutMs)])
          : AbortSignal.timeout(timeoutMs),
      }),
    );
  } catch {
    current = undefined;
  }
  if (current?.ok) {
    const body = await current
      .clone()
      .json()
      .catch(() => undefined);
    if (body && typeof body === 'object' && holdsPatch(body as Record<string, unknown>, patch)) {
      await refusal.body?.cancel().catch(() => {});
      const answered = new Headers(current.headers);
      answered.set(outcomeHeader, 'already-applied');
      return new Response(current.body, { status: 200, headers: answered });
    }
  }
  await current?.body?.cancel().catch(() => {});
  const problem = (await refusal.json().catch(() => ({}))) as Record<string, unknown>;
  const answered = new Headers(refusal.headers);
  answered.set(outcomeHeader, 'unknown');
  answered.delete('content-length');
  return new Response(
    JSON.stringify({
      type: '/problems/precondition-failed',
      title: 'Precondition failed',
      status: 412,
      ...problem,
      detail:
        "The first attempt's answer was lost, so its outcome is unknown: its retry found the resource changed since the ETag you sent, and not as this change asks. Read it again and decide whether to change it.",
      outcome_unknown: true,
    }),
    { status: 412, headers: answered },
  );
}

export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

/**
 * A fetch that bounds each attempt and retries as the policy above says; with `reads`, for the
 * calls that read by POST (a search), every request it sends is retried as a read.
 */
export function retryingFetch(
  policy: RetryPolicy,
  fetchImpl: (request: Request) => Promise<Response>,
  reads = false,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const kind = requestKind(request, reads);
    let answerLost = false;
    for (let retry = 0; ; retry++) {
      const timeout = AbortSignal.timeout(policy.timeoutMs + heldForMs(request));
      const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
      const attempt = new Request(request.clone(), { signal });
      let response: Response;
      try {
        response = await fetchImpl(attempt);
      } catch (error) {
        // The caller's own abort ends the call; a timeout or a network error is a lost answer.
        if (request.signal?.aborted) throw error;
        if (!kind.survivesLostAnswer || retry >= policy.maxRetries)
          throw new AnswerLostError(request, error, kind.survivesLostAnswer, reads);
        answerLost = true;
        await sleep(backoffMs(retry, policy), request.signal);
        continue;
      }
      if (kind.isDelete && answerLost && response.status === 404) {
        await response.body?.cancel().catch(() => {});
        const headers = new Headers(response.headers);
        for (const name of ['content-type', 'content-length']) headers.delete(name);
        headers.set(outcomeHeader, 'deleted-or-already-absent');
        return new Response(null, { status: 204, headers });
      }
      if (kind.isPatch && answerLost && response.status === 412)
        return afterRefusedRetry(request, response, fetchImpl, policy.timeoutMs);
      const refusedUnseen =
        response.status === 429 ||
        (response.status === 409 &&
          kind.keyed &&
          (await problemType(response)) === '/problems/idempotency-in-progress');
      const retryable = refusedUnseen || (response.status === 503 && kind.survivesLostAnswer);
      if (!retryable || retry >= policy.maxRetries) return response;
      const asked = retryAfterMs(response.headers.get('retry-after'));
      if (asked !== undefined && asked > policy.maxRetryAfterMs) return response;
      answerLost ||= response.status === 503;
      await response.body?.cancel().catch(() => {});
      await sleep(Math.max(asked ?? 0, backoffMs(retry, policy)), request.signal);
    }
  };
}
