/**
 * Secrets and signatures as the Standard Webhooks specification (v1) has them: a secret is
 * `whsec_` and the base64 of 32 random bytes; a signature is `v1,` and the base64 HMAC-SHA256 of
 * `{webhook-id}.{webhook-timestamp}.{body}`. The HMAC is node:crypto's (the specification's own
 * library hashes in JavaScript, several times slower); the tests verify every signature with that
 * library.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { keptBy } from '../kept-by';

export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Decoded keys by secret: an endpoint's secret is decoded once, not at every attempt. */
const keyOf = keptBy(10_000, (secret: string) =>
  Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64'),
);

/** The `webhook-signature` header: one signature per secret, separated by a space. */
export function signatureHeader(
  webhookId: string,
  timestamp: Date,
  body: string,
  secrets: string[],
): string {
  // The body is hashed as it is, not joined to the prefix: a large event is not copied once more.
  const prefix = `${webhookId}.${Math.floor(timestamp.getTime() / 1000)}.`;
  return secrets
    .map(
      (secret) =>
        `v1,${createHmac('sha256', keyOf(secret)).update(prefix).update(body).digest('base64')}`,
    )
    .join(' ');
}
