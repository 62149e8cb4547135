/**
 * Secrets and signatures as the Standard Webhooks specification (v1) has them, made with its own
 * library: a secret is `whsec_` and the base64 of 32 random bytes; a signature is `v1,` and the
 * base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The `webhook-signature` header: one signature per secret, separated by a space. */
export function signatureHeader(
  webhookId: string,
  timestamp: Date,
  body: string,
  secrets: string[],
): string {
  return secrets.map((secret) => new Webhook(secret).sign(webhookId, timestamp, body)).join(' ');
}
