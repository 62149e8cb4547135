/**
 * A webhook receiver in one call, for Node's http and for Express, as octokit's
 * createNodeMiddleware is for GitHub's: it takes the raw body (read from the request, or the
 * Buffer or string a raw body parser left), verifies it with verifyWebhook, hands the event to
 * `onEvent` and answers 204; what it refuses (`4xx`: the endpoint's delivery log shows the
 * status) it answers with a short reason in plain text, for whoever tries it by hand.
 */
import { Webhook } from 'standardwebhooks';
import type { TypedEvent } from './types';
import type { ApiVersion, DefaultApiVersion } from './versions';
import { verifyWebhook, WebhookVerificationError } from './webhook-verification';

/** The request as the handler reads it: Node's IncomingMessage, or an Express Request. */
export interface WebhookRequest {
  method?: string;
  url?: string;
  headers: Record<string, string | string[] | undefined>;
  /** What a body parser before the handler left: a Buffer or a string is taken as the raw body. */
  body?: unknown;
  /** True once the body has been read (by a parser that left no raw body, the handler cannot verify). */
  readableEnded?: boolean;
  on(event: 'data', listener: (chunk: Uint8Array | string) => void): unknown;
  on(event: 'end' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  resume(): unknown;
}

/** The response as the handler answers it: Node's ServerResponse, or an Express Response. */
export interface WebhookResponse {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(body?: string): unknown;
}

/** A request listener for `http.createServer`, and a middleware or route handler for Express. */
export type WebhookHandler = (
  req: WebhookRequest,
  res: WebhookResponse,
  next?: (error?: unknown) => void,
) => void;

export interface WebhookHandlerOptions<V extends ApiVersion = DefaultApiVersion> {
  /** The endpoint's secret (`whsec_…`), or its secrets during a rotation: either verifies. */
  secret: string | string[];
  /**
   * Handles one verified event; the delivery is answered 204 once it resolves, and 500 when it
   * throws or rejects (the service then delivers the event again later). Deliveries are at least
   * once: handle each `event_id` (the `webhook-id`) once.
   */
  onEvent: (event: TypedEvent<V>) => void | Promise<void>;
  /**
   * The path it answers (`/hook`); a request to another path goes to `next` (Express), or is
   * answered 404 without one. Without it, every request is a delivery.
   */
  path?: string;
  /** The largest body taken, in bytes; a larger one is answered 413. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Told of what made the handler answer 500: onEvent's error, or a body already parsed. Default: console.error. */
  onError?: (error: unknown) => void;
  /** Told of each request refused (`4xx`), with the reason it was answered: to log, or to count. */
  onRefusal?: (refusal: { status: number; reason: string }) => void;
}

const defaultMaxBodyBytes = 1024 * 1024;

/**
 * A receiver of the service's webhooks: `http.createServer(webhookHandler({ secret, onEvent }))`,
 * or `app.post('/hook', webhookHandler({ secret, onEvent }))` with Express. Each delivery is
 * verified (400 for a malformed one, 401 for a bad signature or a stale timestamp), then handed
 * to `onEvent` (204 once handled, 500 if it fails); only `POST` is taken (405), bodies up to
 * `maxBodyBytes` (413). Mount it before any JSON body parser, or after `express.raw()`: the
 * signature is over the body exactly as sent.
 */
export function webhookHandler<V extends ApiVersion = DefaultApiVersion>(
  options: WebhookHandlerOptions<V>,
): WebhookHandler {
  const secrets = checkedSecrets(options.secret);
  const { onEvent, path, maxBodyBytes = defaultMaxBodyBytes } = options;
  const onError = options.onError ?? ((error) => console.error('webhookHandler:', error));
  const refuse = (res: WebhookResponse, status: number, reason: string) => {
    options.onRefusal?.({ status, reason });
    answer(res, status, reason);
  };

  async function handle(req: WebhookRequest, res: WebhookResponse): Promise<void> {
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return refuse(res, 405, 'a webhook delivery is a POST');
    }
    const body = await rawBody(req, maxBodyBytes);
    if (body === 'too large') return refuse(res, 413, `the body is over ${maxBodyBytes} bytes`);
    if (body === 'aborted') return;
    if (body === 'already parsed') {
      onError(
        new Error(
          'webhookHandler found the body already parsed: mount it before any JSON body parser, or after express.raw({ type: "application/json" }), so it can verify the body as sent',
        ),
      );
      return answer(res, 500, 'the receiver cannot read the raw body');
    }
    let event: TypedEvent<V>;
    try {
      event = verifyWebhook<V>(body, req.headers, secrets);
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      return refuse(
        res,
        error.reason === 'format' ? 400 : 401,
        `${error.reason}: ${error.message}`,
      );
    }
    try {
      await onEvent(event);
    } catch (error) {
      onError(error);
      return answer(res, 500, 'the receiver failed to handle the event');
    }
    answer(res, 204);
  }

  return (req, res, next) => {
    if (path !== undefined && (req.url ?? '').split('?')[0] !== path) {
      if (next) return next();
      return refuse(res, 404, `deliveries are taken at ${path}`);
    }
    handle(req, res).catch((error) => {
      onError(error);
      answer(res, 500, 'the receiver failed');
    });
  };
}

/** The secrets, each checked to be an endpoint's: a mistake (an empty variable, `null` from jq) is said at once. */
function checkedSecrets(secret: string | string[]): string[] {
  const secrets = Array.isArray(secret) ? secret : [secret];
  const usable = (candidate: unknown) => {
    if (typeof candidate !== 'string' || !candidate.startsWith('whsec_')) return false;
    try {
      new Webhook(candidate);
      return true;
    } catch {
      return false;
    }
  };
  if (secrets.length === 0 || !secrets.every(usable))
    throw new TypeError(
      "webhookHandler needs the endpoint's secret, whsec_… as its registration or rotation answered it (or several during a rotation)",
    );
  return secrets;
}

function answer(res: WebhookResponse, status: number, reason?: string): void {
  res.statusCode = status;
  if (reason === undefined) return void res.end();
  res.setHeader('content-type', 'text/plain; charset=utf-8');
  res.end(`${reason}\n`);
}

/**
 * The body as sent: the Buffer or string a parser left, else read from the request, at most
 * `limit` bytes. Past the limit the rest is read and dropped, so the 413 reaches the sender (a
 * connection closed while it still sends would lose it).
 */
function rawBody(
  req: WebhookRequest,
  limit: number,
): Promise<Uint8Array | string | 'too large' | 'aborted' | 'already parsed'> {
  const given = req.body;
  if (given instanceof Uint8Array || typeof given === 'string')
    return Promise.resolve(byteLength(given) > limit ? 'too large' : given);
  if (req.readableEnded) return Promise.resolve('already parsed');
  return new Promise((resolve) => {
    let chunks: Uint8Array[] = [];
    let size = 0;
    let tooLarge = Number(req.headers['content-length']) > limit;
    req.on('data', (chunk) => {
      if (tooLarge) return;
      const bytes = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
      size += bytes.length;
      if (size > limit) {
        tooLarge = true;
        chunks = [];
      } else chunks.push(bytes);
    });
    req.on('end', () => resolve(tooLarge ? 'too large' : concat(chunks, size)));
    // A sender that goes away mid-body gets no answer; 'close' after 'end' changes nothing.
    req.on('error', () => resolve('aborted'));
    req.on('close', () => resolve('aborted'));
    req.resume();
  });
}

const byteLength = (body: Uint8Array | string) =>
  typeof body === 'string' ? new TextEncoder().encode(body).length : body.length;

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  const whole = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    whole.set(chunk, offset);
    offset += chunk.length;
  }
  return whole;
}
