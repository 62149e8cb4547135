/**
 * Outbound HTTP for deliveries (undici): connections kept alive per origin, no redirect
 * followed, every attempt cut off after the timeout (lookup and connection included), and every
 * connection made through the guard, its host's addresses from the resolver (dns-lookups.ts),
 * looked up before the attempt takes its slot. An attempt's answer comes as soon as it is known;
 * that the attempt has `ended` waits, besides, for the connections it started, which the timeout
 * cannot call off.
 *
 * Each attempt is one undici dispatch with a handler of its own (Exchange): no response stream,
 * AbortSignal or listener per attempt, which together cost more CPU than the rest of the request.
 */
import net from 'node:net';
import type { Agent, buildConnector, Dispatcher } from 'undici';
import { keptBy } from '../kept-by';
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
  post(url: string, headers: Record<string, string>, body: string): Attempt;
  /** Calls off every attempt in flight: each ends as abandoned, unless its answer has come. */
  callOff(): void;
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

/** How long an attempt whose tenant has too many names being looked up waits before asking again. */
const busyWaitMs = 250;

/**
 * Targets kept at the most: an instance has attempts of at most a few hundred endpoints at once
 * (its slots and what is claimed ahead), and a URL may be 2,000 characters.
 */
const targetsKept = 1_000;

export function createWebhookClient(options: {
  timeoutMs: number;
  allowPrivateTargets: boolean;
  resolver: HostResolver;
}): WebhookClient {
  const { timeoutMs, resolver } = options;
  const targetOf = keptBy(targetsKept, (url: string): Target => {
    const parsed = new URL(url);
    return {
      origin: parsed.origin,
      path: parsed.pathname + parsed.search,
      host: bare(parsed.hostname),
    };
  });
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
  const inFlight = new Set<Exchange>();
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
      // A tenant with too many names waiting asks again a little later, not at once.
      return resolver
        .resolve(host, tenantId)
        .then(noop, (error: NodeJS.ErrnoException) =>
          error.code === 'EBUSY'
            ? new Promise<void>((done) => setTimeout(done, busyWaitMs))
            : undefined,
        );
    },
    post(url, headers, body) {
      const { origin, path, host } = targetOf(url);
      const exchange = new Exchange(timeoutMs, () => inFlight.delete(exchange));
      inFlight.add(exchange);
      try {
        // undici follows no redirect: a 3xx is the answer.
        agentNow().dispatch({ origin, path, method: 'POST', headers, body }, exchange);
      } catch (error) {
        exchange.onResponseError(undefined, error as Error);
      }
      const ended = exchange.result.then(async (answer) => {
        // An attempt cut off may leave its connection being made: it ends at the connector's own timeout.
        if (answer.status === undefined) await Promise.all([...(connecting.get(host) ?? [])]);
      });
      return { result: exchange.result, ended };
    },
    callOff() {
      for (const exchange of inFlight) exchange.cut('called off');
    },
    close: async () => agent?.close(),
  };
}

/**
 * One attempt as undici's handler: its status and Retry-After kept, the answer read (up to
 * `answerReadLimit`) and thrown away so that its connection is used again. It is cut off through
 * undici's controller, or, before undici has given it one, as soon as it does; it ends only when
 * undici is done with it, so that an attempt cut off while waiting for a connection is not sent
 * after its slot is free.
 */
class Exchange implements Dispatcher.DispatchHandler {
  readonly result: Promise<AttemptResult>;
  private settle!: (result: AttemptResult) => void;
  private readonly started = performance.now();
  private readonly timer: NodeJS.Timeout;
  private controller: Dispatcher.DispatchController | undefined;
  private cutOff: 'timeout' | 'called off' | undefined;
  private status: number | undefined;
  private retryAfter: string | string[] | undefined;
  private read = 0;
  private done = false;

  constructor(
    timeoutMs: number,
    private readonly onEnd: () => void,
  ) {
    this.result = new Promise((resolve) => (this.settle = resolve));
    this.timer = setTimeout(() => this.cut('timeout'), timeoutMs);
  }

  cut(why: 'timeout' | 'called off'): void {
    if (this.cutOff !== undefined || this.done) return;
    this.cutOff = why;
    this.controller?.abort(new Error(why));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.cutOff !== undefined) controller.abort(new Error(this.cutOff));
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (statusCode < 200) return;
    this.status = statusCode;
    this.retryAfter = headers['retry-after'];
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.read += chunk.length;
    if (this.read > answerReadLimit) controller.abort(new Error('the answer is too long to read'));
  }

  onResponseEnd(): void {
    this.end(undefined);
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    this.end(error);
  }

  /** Settles the result once: the status when one came, however the answer's reading ended. */
  private end(error: Error | undefined): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.onEnd();
    const durationMs = Math.round(performance.now() - this.started);
    if (this.status !== undefined)
      return this.settle({
        status: this.status,
        retryAfterMs: parseRetryAfter(this.retryAfter),
        durationMs,
      });
    if (this.cutOff === 'called off') return this.settle({ abandoned: true, durationMs });
    this.settle({ error: this.cutOff === 'timeout' ? 'timeout' : describe(error), durationMs });
  }
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
    case 'EBUSY':
      return 'too many DNS lookups waiting';
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
