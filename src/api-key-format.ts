/**
 * What an API key looks like: `tt_` and 43 base64url characters (256 random bits). Only its
 * SHA-256 is stored; a fast hash is enough for a key that long, and costs a lookup nothing.
 */
import { createHash, randomBytes } from 'node:crypto';

export const apiKeyPattern = /^tt_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): string {
  return 'tt_' + randomBytes(32).toString('base64url');
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export const apiKeyScopes = ['read', 'write'] as const;
export type ApiKeyScope = (typeof apiKeyScopes)[number];
