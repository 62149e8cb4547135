/**
 * Retries, as a fetch that openapi-fetch calls once per call. A request is tried again only when
 * trying again cannot make a change twice:
 * - a refusal that says nothing was done (429, and 409 while a request with the same
 *   Idempotency-Key still runs) is retried for any request;
 * - a lost answer (a network error or a timeout) and 503 (the change may or may not have been
 *   made) are retried only for reads, for POSTs that carry an Idempotency-Key (the service replays
 *   the first answer), for a PATCH or DELETE with If-Match, and for a DELETE (deleting twice
 *   deletes once: a retry that finds 404 after a lost answer reports the deletion).
 * Every POST that takes an Idempotency-Key gets one for the call, reused on every attempt.
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

/** The creates that take an Idempotency-Key (held to the document by a test). */
export const keyedCreatePaths = ['/v1/projects', '/v1/tasks', '/v1/webhook-endpoints'];

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

/** What kind of request this is, for what may be retried. */
export function requestKind(request: Request): {
  keyedCreate: boolean;
  survivesLostAnswer: boolean;
  isDelete: boolean;
} {
  const path = new URL(request.url).pathname;
  const keyedCreate = request.method === 'POST' && keyedCreatePaths.includes(path);
  const conditional = request.headers.has('if-match');
  const survivesLostAnswer =
    request.method === 'GET' ||
    request.method === 'HEAD' ||
    keyedCreate ||
    request.method === 'DELETE' ||
    (request.method === 'PATCH' && conditional);
  return { keyedCreate, survivesLostAnswer, isDelete: request.method === 'DELETE' };
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

export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

/** A fetch that adds the Idempotency-Key, bounds each attempt and retries as the policy above says. */
export function retryingFetch(
  policy: RetryPolicy,
  fetchImpl: (request: Request) => Promise<Response>,
): (request: Request) => Promise<Response> {
  return async (original) => {
    const kind = requestKind(original);
    let request = original;
    if (kind.keyedCreate && !original.headers.has('idempotency-key')) {
      request = new Request(original, { headers: new Headers(original.headers) });
      request.headers.set('idempotency-key', newIdempotencyKey());
    }
    let answerLost = false;
    for (let retry = 0; ; retry++) {
      const timeout = AbortSignal.timeout(policy.timeoutMs + heldForMs(request));
      const signal = original.signal ? AbortSignal.any([original.signal, timeout]) : timeout;
      const attempt = new Request(request.clone(), { signal });
      let response: Response;
      try {
        response = await fetchImpl(attempt);
      } catch (error) {
        // The caller's own abort ends the call; a timeout or a network error is a lost answer.
        if (original.signal?.aborted || !kind.survivesLostAnswer || retry >= policy.maxRetries)
          throw error;
        answerLost = true;
        await sleep(backoffMs(retry, policy), original.signal);
        continue;
      }
      if (kind.isDelete && answerLost && response.status === 404)
        return new Response(null, { status: 204, headers: response.headers });
      const refusedUnseen =
        response.status === 429 ||
        (response.status === 409 &&
          kind.keyedCreate &&
          (await problemType(response)) === '/problems/idempotency-in-progress');
      const retryable = refusedUnseen || (response.status === 503 && kind.survivesLostAnswer);
      if (!retryable || retry >= policy.maxRetries) return response;
      const asked = retryAfterMs(response.headers.get('retry-after'));
      if (asked !== undefined && asked > policy.maxRetryAfterMs) return response;
      answerLost ||= response.status === 503;
      await response.body?.cancel().catch(() => {});
      await sleep(Math.max(asked ?? 0, backoffMs(retry, policy)), original.signal);
    }
  };
}
