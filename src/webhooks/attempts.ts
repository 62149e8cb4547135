/** Making an attempt (its signed request) and telling of it (its log line and metrics). */
import type { Logger } from 'pino';
import type { ClaimedDelivery, EventToSend } from './delivery-queue-repository';
import type { Attempt, AttemptResult, WebhookClient } from './http-client';
import { outcomeLabel, type WebhookMetrics } from './attempt-metrics';
import { signatureHeader } from './signer';
import type { JsonObject } from '../versions/change';
import { eventDown } from '../versions/migrate';
import { newestVersion } from '../versions/versions';

/** An attempt that ended before it began. */
export const settled = (result: AttemptResult): Attempt => ({
  result: Promise.resolve(result),
  ended: Promise.resolve(),
});

/**
 * The event's JSON in the endpoint's version: as stored (the newest version's shape, byte for
 * byte) for an endpoint on the newest, otherwise brought down to its version.
 */
function bodyIn(apiVersion: string, json: string): string {
  if (apiVersion === newestVersion) return json;
  return JSON.stringify(
    eventDown(apiVersion, JSON.parse(json) as JsonObject, undefined, { inPlace: true }),
  );
}

/**
 * Sends the event to the endpoint in its version, signed as sent (Standard Webhooks: the event's
 * id is the webhook-id, the same in every attempt); an event no longer kept fails without a request.
 */
export function sendSigned(
  sender: WebhookClient,
  delivery: ClaimedDelivery,
  event: EventToSend | undefined,
): Attempt {
  if (event === undefined) return settled({ error: 'event no longer kept', durationMs: 0 });
  const body = bodyIn(delivery.apiVersion, event.json);
  const timestamp = new Date();
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'task-tracker-webhooks/1.3',
    'api-version': delivery.apiVersion,
    'webhook-id': delivery.eventId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': signatureHeader(delivery.eventId, timestamp, body, delivery.secrets),
  };
  return sender.post(delivery.url, headers, body);
}

/** The URL's scheme, host and port: what a log line may say of a receiver (a path or query may hold a token). */
const originOf = (url: string) => {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
};

/**
 * The attempt's log line and metrics: who and what (ids, the receiver's origin), how it went and
 * how long it took; never the body, the secret or the URL's path and query.
 */
export function observeAttempt(
  { logger, metrics }: { logger: Logger; metrics: WebhookMetrics },
  delivery: ClaimedDelivery,
  result: AttemptResult,
  eventCreatedAt: string | undefined,
): void {
  const outcome = outcomeLabel(result);
  logger.info(
    {
      webhook_endpoint_id: delivery.endpointId,
      event_id: delivery.eventId,
      delivery_id: delivery.deliveryId,
      attempt: delivery.attempt,
      target: originOf(delivery.url),
      outcome: outcome ?? 'called_off',
      status: result.status ?? null,
      error: result.error ?? null,
      duration_ms: result.durationMs,
    },
    'webhook delivery attempt',
  );
  if (outcome === undefined) return;
  metrics.attempted(outcome);
  if (outcome === 'delivered' && eventCreatedAt !== undefined) metrics.delivered(eventCreatedAt);
}
