/**
 * Outbound HTTP for deliveries (undici): connections kept alive per origin, no redirect
 * followed, every attempt cut off after the timeout (lookup and connection included), and every
 * connection made through the guard, its host's addresses from the resolver (dns-lookups.ts),
 * looked up before the attempt takes its slot. An attempt's answer comes as soon as it is known;
 * that the attempt has `ended` waits, besides, for the connections it started, which the timeout
 * cannot call off.
 */
import net from 'node:net';
import type { Agent, buildConnector } from 'undici';
import type { HostResolver } from './dns-lookups';
import { parseRetryAfter } from './retry-schedule';
import { guardedConnector, TargetRefusedError } from './target-guard';

export interface AttemptResult {
  /** The receiver's status, when one came. */
  status?: number;
  /** The receiver's Retry-After, in milliseconds from now. */
  retryAfterMs?: number;
  /** Why no status came: timeout, connection refused, … */
  error?: string;
  durationMs: number;
  /** The attempt was called off (the service is stopping): it says nothing of the receiver. */
  abandoned?: boolean;
}

/** The most of a receiver's answer that is read (and thrown away) so its connection can be used again. */
const answerReadLimit = 64 * 1024;

export interface Attempt {
  result: Promise<AttemptResult>;
  /** Settles once the attempt's lookup and the connections it was waiting on have ended too. */
  ended: Promise<void>;
}

export interface WebhookClient {
  /**
   * Whether an attempt to the URL can connect without waiting for a lookup: true for an address,
   * or a host whose answer is kept; otherwise the lookup, in the tenant's turn, settling once it has ended.
   */
  prepare(url: string, tenantId: string): true | Promise<void>;
  /** Sends the delivery. */
  post(
    url: string,
    headers: Record<string, string>,
    body: string,
    options: { stop?: AbortSignal },
  ): Attempt;
  close(): Promise<void>;
}

/**
 * undici, loaded at the first delivery: it is among the largest modules the service uses, and an
 * instance that delivers nothing never needs it.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded at the first delivery
const undici = () => require('undici') as typeof import('undici');

const bare = (hostname: string) => (hostname.startsWith('[') ? hostname.slice(1, -1) : hostname);
const noop = () => {};

/** What a request needs of an endpoint's URL, parsed once per URL rather than at every attempt. */
interface Target {
  origin: string;
  path: string;
  host: string;
}

/** Targets kept at the most: an instance serves far fewer endpoints at once. */
const targetsKept = 10_000;

export function createWebhookClient(options: {
  timeoutMs: number;
  allowPrivateTargets: boolean;
  resolver: HostResolver;
}): WebhookClient {
  const { timeoutMs, resolver } = options;
  const targets = new Map<string, Target>();
  const targetOf = (url: string): Target => {
    let target = targets.get(url);
    if (target === undefined) {
      if (targets.size >= targetsKept) targets.clear();
      const parsed = new URL(url);
      target = {
        origin: parsed.origin,
        path: parsed.pathname + parsed.search,
        host: bare(parsed.hostname),
      };
      targets.set(url, target);
    }
    return target;
  };
  /** Connections being made, by host: a connection attempt outlives the request that asked for it (up to its own timeout). */
  const connecting = new Map<string, Set<Promise<void>>>();
  const connect: buildConnector.connector = (connectOptions, callback) => {
    const host = bare(connectOptions.hostname);
    const pending = connecting.get(host) ?? new Set();
    connecting.set(host, pending);
    let done = noop;
    const made = new Promise<void>((resolve) => (done = resolve));
    pending.add(made);
    guarded!(connectOptions, (...args) => {
      pending.delete(made);
      if (pending.size === 0 && connecting.get(host) === pending) connecting.delete(host);
      done();
      (callback as (...a: unknown[]) => void)(...args);
    });
  };
  let guarded: buildConnector.connector | undefined;
  let agent: Agent | undefined;
  const agentNow = (): Agent => {
    guarded ??= guardedConnector({ ...options, lookup: resolver.lookup });
    agent ??= new (undici().Agent)({
      connect,
      keepAliveTimeout: 4000,
      keepAliveMaxTimeout: 60_000,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    return agent;
  };
  return {
    prepare(url, tenantId) {
      const { host } = targetOf(url);
      if (net.isIP(host) !== 0 || resolver.kept(host)) return true;
      return resolver.resolve(host, tenantId).then(noop, noop);
    },
    post(url, headers, body, { stop }) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      const { origin, path, host } = targetOf(url);
      // One controller and one timer an attempt: AbortSignal.any and AbortSignal.timeout cost
      // more than the rest of the attempt's bookkeeping together.
      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, timeoutMs);
      const callOff = () => controller.abort();
      stop?.addEventListener('abort', callOff, { once: true });
      const result = (async (): Promise<AttemptResult> => {
        try {
          // undici's request follows no redirect: a 3xx is the answer.
          const response = await agentNow().request({
            origin,
            path,
            method: 'POST',
            headers,
            body,
            signal: controller.signal,
          });
          await response.body.dump({ limit: answerReadLimit }).catch(() => {});
          return {
            status: response.statusCode,
            retryAfterMs: parseRetryAfter(response.headers['retry-after']),
            durationMs: elapsed(),
          };
        } catch (error) {
          if (stop?.aborted && !timedOut) return { abandoned: true, durationMs: elapsed() };
          return { error: timedOut ? 'timeout' : describe(error), durationMs: elapsed() };
        } finally {
          clearTimeout(timer);
          stop?.removeEventListener('abort', callOff);
        }
      })();
      const ended = result.then(async (answer) => {
        // An attempt cut off may leave its connection being made: it ends at the connector's own timeout.
        if (answer.status === undefined) await Promise.all([...(connecting.get(host) ?? [])]);
      });
      return { result, ended };
    },
    close: async () => agent?.close(),
  };
}

/** A short, stable phrase for a failure to get an answer. */
function describe(error: unknown): string {
  const refused =
    error instanceof TargetRefusedError ? error : (error as { cause?: unknown } | null)?.cause;
  if (refused instanceof TargetRefusedError) return `refused: ${refused.message}`.slice(0, 200);
  const code = (error as { code?: unknown } | null)?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection closed by the receiver';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ETIMEOUT':
      return 'DNS lookup timed out';
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return 'timeout';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
  }
  if (
    typeof code === 'string' &&
    (code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('ERR_SSL'))
  )
    return `TLS: ${code}`;
  return `request failed: ${typeof code === 'string' ? code : ((error as Error)?.message ?? String(error))}`.slice(
    0,
    200,
  );
}
