/**
 * Verifying the deliveries a receiver gets (Standard Webhooks v1, through the `standardwebhooks`
 * library), and signing test deliveries for a receiver's own tests.
 */
import { Webhook, WebhookVerificationError as LibraryVerificationError } from 'standardwebhooks';
import type { TypedEvent } from './types';
import type { ApiVersion, DefaultApiVersion } from './versions';

/** Node's IncomingHttpHeaders, a Fetch Headers, or any plain object of header names to values. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export type WebhookVerificationReason = 'format' | 'timestamp' | 'signature';

/** A delivery verifyWebhook refused, and its `reason`. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    /** format: a header missing or malformed, or a body that is not an event; timestamp: outside 5 minutes of now; signature: signed by none of the secrets. */
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}

const headerNames = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

function headerValues(headers: WebhookHeaders): Record<string, string> {
  const values: Record<string, string> = {};
  const isFetchHeaders = typeof (headers as Headers).get === 'function';
  const plain = isFetchHeaders
    ? undefined
    : Object.fromEntries(
        Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]),
      );
  for (const name of headerNames) {
    const value = isFetchHeaders ? (headers as Headers).get(name) : plain![name];
    const text = Array.isArray(value) ? value.join(' ') : value;
    if (typeof text !== 'string' || text === '')
      throw new WebhookVerificationError('format', `The ${name} header is missing.`);
    values[name] = text;
  }
  return values;
}

function reasonOf(error: unknown): WebhookVerificationReason {
  const message = error instanceof Error ? error.message : '';
  if (/timestamp too (old|new)/i.test(message)) return 'timestamp';
  if (/no matching signature/i.test(message)) return 'signature';
  return 'format';
}

function utf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new WebhookVerificationError('format', 'The body is not UTF-8.');
  }
}

/**
 * The event a delivery carries, once its signature is verified with one of the secrets (several
 * during a rotation) and its timestamp is within 5 minutes of now. Pass the body exactly as
 * received, before any JSON parsing. WebhookVerificationError says why a delivery is refused.
 * The event is in the endpoint's `api_version` (sent as the delivery's `Api-Version` header): name
 * it to have its types, `verifyWebhook<'2026-12-15'>(…)`; without it, `2026-11-28`'s.
 */
export function verifyWebhook<V extends ApiVersion = DefaultApiVersion>(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secrets: string | string[],
): TypedEvent<V> {
  const values = headerValues(headers);
  const body = typeof rawBody === 'string' ? rawBody : utf8(rawBody);
  const candidates = Array.isArray(secrets) ? secrets : [secrets];
  if (candidates.length === 0) throw new TypeError('verifyWebhook needs at least one secret');
  let last: WebhookVerificationError | undefined;
  for (const secret of candidates) {
    try {
      const event = new Webhook(secret).verify(body, values);
      if (
        event === null ||
        typeof event !== 'object' ||
        typeof (event as TypedEvent<V>).type !== 'string'
      )
        throw new WebhookVerificationError('format', 'The body is not an event.');
      return event as TypedEvent<V>;
    } catch (error) {
      if (error instanceof WebhookVerificationError) throw error;
      if (!(error instanceof LibraryVerificationError))
        throw new WebhookVerificationError('format', 'The body is not JSON.');
      last = new WebhookVerificationError(reasonOf(error), error.message);
      // Only a signature depends on the secret: another secret may still match it.
      if (last.reason !== 'signature') throw last;
    }
  }
  throw last!;
}

/**
 * A delivery of `event` signed with `secret` as the service signs one: the body and the three
 * headers, for a receiver's own tests. The event may be of any version.
 */
export function signTestWebhook(
  event: TypedEvent<ApiVersion>,
  secret: string,
  options: { timestamp?: Date; id?: string } = {},
): { body: string; headers: Record<(typeof headerNames)[number] | 'content-type', string> } {
  const body = JSON.stringify(event);
  const timestamp = options.timestamp ?? new Date();
  const id = options.id ?? event.event_id;
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, timestamp, body),
    },
  };
}
