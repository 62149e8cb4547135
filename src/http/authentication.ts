/**
 * Bearer API keys (RFC 6750): who is calling, and whether the key may do what the operation
 * needs (its `x-required-scope` in the document).
 */
import type { Context } from 'openapi-backend';
import { apiKeyPattern, hashApiKey, type ApiKeyScope } from '../api-key-format';
import type { ApiKeysRepository, Principal } from '../db/api-keys-repository';
import { ProblemError } from './problems';

function bearerToken(context: Context): string | undefined {
  const header = context.request.headers['authorization'];
  const match = typeof header === 'string' ? /^Bearer +(\S+) *$/i.exec(header) : null;
  return match?.[1];
}

/** The security handler for `bearerAuth`: the key's principal, or false to refuse it. */
export function bearerAuth(apiKeys: ApiKeysRepository) {
  return async (context: Context): Promise<Principal | false> => {
    const token = bearerToken(context);
    if (token === undefined || !apiKeyPattern.test(token)) return false;
    const principal = await apiKeys.findActive(hashApiKey(token));
    if (!principal) return false;
    // Bookkeeping for `apikey list`; a request never waits for it or fails by it.
    apiKeys.recordUse(principal.keyId).catch(() => {});
    return principal;
  };
}

/** openapi-backend's unauthorizedHandler: why the key was refused, as RFC 6750 says it. */
export function refuseUnauthenticated(context: Context): never {
  // A security handler that threw (the database is down) is not a bad key: report that fault.
  const outcome = context.security?.bearerAuth as { error?: unknown } | undefined;
  if (outcome?.error) throw outcome.error;
  if (context.request.headers['authorization'] === undefined) {
    throw new ProblemError('unauthenticated', 'This request needs an API key: send Authorization: Bearer <API_KEY>.', {
      headers: { 'WWW-Authenticate': 'Bearer realm="task-tracker"' },
    });
  }
  throw new ProblemError('unauthenticated', 'The API key is malformed, unknown or revoked.', {
    headers: {
      'WWW-Authenticate': 'Bearer realm="task-tracker", error="invalid_token", error_description="The API key is malformed, unknown or revoked."',
    },
  });
}

export function requireScope(context: Context): void {
  const needed = (context.operation as { 'x-required-scope'?: ApiKeyScope })['x-required-scope'];
  const principal = context.security?.bearerAuth as Principal;
  if (needed !== undefined && !principal.scopes.includes(needed)) {
    throw new ProblemError('insufficient-scope', `This operation needs the ${needed} scope; the key has ${principal.scopes.join(', ')}.`, {
      headers: {
        'WWW-Authenticate': `Bearer realm="task-tracker", error="insufficient_scope", scope="${needed}"`,
      },
    });
  }
}
