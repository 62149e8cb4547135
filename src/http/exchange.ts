import type { RequestContext } from './observability';
import type { BodyTextCheck } from './unknown-field-flood';

/**
 * What the operation router needs of an HTTP exchange besides the request's parts: where it
 * came from, a place to note what routing learned, and the steps that must wait until the
 * operation and the key are known, because they cost the service something.
 */
export interface Exchange {
  /** What routing learned, for the request's log line and metrics. */
  requestContext: RequestContext;
  /**
   * The client's address: the socket's, or as far back in X-Forwarded-For as TRUST_PROXY believes.
   * Found when asked: only a request whose key was not accepted lately needs it.
   */
  clientAddress(): string;
  /** Counts the request against its verified key's quota; rejects with the 429 problem past it. */
  countRequest(keyId: string): Promise<void>;
  /**
   * Counts requests past this one against the key's quota (a bulk change's, one per 100 tasks),
   * so that the answer's RateLimit header says what is left after them all; rejects with the 429
   * problem past the quota.
   */
  countMore(keyId: string, requests: number, why: string): Promise<void>;
  /**
   * Reads and parses the body on the methods that take one; rejects with its problem. `check`
   * reads the body's text first, once its bytes are known to be UTF-8 and not nested too deep.
   */
  readBody(check?: BodyTextCheck): Promise<unknown>;
  /** Aborts when the client's connection closes before the answer is sent (made when first asked for). */
  clientGone(): AbortSignal;
}
