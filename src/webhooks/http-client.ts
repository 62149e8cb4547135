/**
 * Outbound HTTP for deliveries (undici): connections kept alive per origin, no redirect
 * followed, every attempt cut off after the timeout (connection included), and every connection
 * made through the guard.
 */
import { Agent, request } from 'undici';
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

export interface WebhookClient {
  post(url: string, headers: Record<string, string>, body: string, stop?: AbortSignal): Promise<AttemptResult>;
  close(): Promise<void>;
}

export function createWebhookClient(options: { timeoutMs: number; allowPrivateTargets: boolean }): WebhookClient {
  const { timeoutMs } = options;
  const agent = new Agent({
    connect: guardedConnector(options),
    keepAliveTimeout: 4000,
    keepAliveMaxTimeout: 60_000,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  return {
    async post(url, headers, body, stop) {
      const started = performance.now();
      const timeout = AbortSignal.timeout(timeoutMs);
      const elapsed = () => Math.round(performance.now() - started);
      try {
        // undici's request follows no redirect: a 3xx is the answer.
        const response = await request(url, { dispatcher: agent, method: 'POST', headers, body, signal: stop ? AbortSignal.any([timeout, stop]) : timeout });
        await response.body.dump({ limit: answerReadLimit, signal: timeout }).catch(() => {});
        return { status: response.statusCode, retryAfterMs: parseRetryAfter(response.headers['retry-after']), durationMs: elapsed() };
      } catch (error) {
        if (stop?.aborted && !timeout.aborted) return { abandoned: true, durationMs: elapsed() };
        return { error: timeout.aborted ? 'timeout' : describe(error), durationMs: elapsed() };
      }
    },
    close: () => agent.close(),
  };
}

/** A short, stable phrase for a failure to get an answer. */
function describe(error: unknown): string {
  const refused = error instanceof TargetRefusedError ? error : (error as { cause?: unknown } | null)?.cause;
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
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return 'timeout';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
  }
  if (typeof code === 'string' && (code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('ERR_SSL'))) return `TLS: ${code}`;
  return `request failed: ${typeof code === 'string' ? code : (error as Error)?.message ?? String(error)}`.slice(0, 200);
}
