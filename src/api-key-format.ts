/**
 * What an API key looks like: `tt_` and 43 base64url characters (256 random bits). Only its
 * SHA-256 is stored; a fast hash is enough for a key that long, and costs a lookup nothing.
 */
import { hash, randomBytes } from 'node:crypto';

export const apiKeyPattern = /^tt_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): string {
  return 'tt_' + randomBytes(32).toString('base64url');
}

/** Every request's key is hashed: the one-shot form, without a Hash object's setup. */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export const apiKeyScopes = ['read', 'write'] as const;
export type ApiKeyScope = (typeof apiKeyScopes)[number];
