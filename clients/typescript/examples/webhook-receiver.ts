/**
 * A webhook receiver on node:http: it verifies each delivery with the endpoint's secret (or both
 * secrets during a rotation), answers 204 once the event is handled, and handles each event once
 * although deliveries are at least once (a retry or a redelivery carries the same webhook-id).
 *
 *   WEBHOOK_SECRETS=whsec_…[,whsec_…] PORT=4242 node webhook-receiver.js
 */
import http from 'node:http';
import { verifyWebhook, WebhookVerificationError } from '@task-tracker/client/webhooks';
import type { TypedEvent } from '@task-tracker/client';

export function createReceiver(
  secrets: string[],
  handle: (event: TypedEvent) => void | Promise<void>,
): http.Server {
  // A real receiver keeps the ids it has handled in its database, in the transaction that handles the event.
  const handled = new Set<string>();
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      try {
        const event = verifyWebhook(Buffer.concat(chunks), req.headers, secrets);
        const id = String(req.headers['webhook-id']);
        if (!handled.has(id)) {
          await handle(event);
          handled.add(id);
        }
        res.writeHead(204).end();
      } catch (error) {
        res.writeHead(error instanceof WebhookVerificationError ? 400 : 500).end();
      }
    });
  });
}

if (require.main === module) {
  const secrets = (process.env.WEBHOOK_SECRETS ?? '').split(',').filter(Boolean);
  createReceiver(secrets, (event) =>
    console.log(`${event.sequence} ${event.type} ${event.event_id}`),
  ).listen(Number(process.env.PORT ?? 4242));
}
