/**
 * Bearer API keys (RFC 6750): who is calling, and whether the key may do what the operation
 * needs (its `x-required-scope` in the document).
 */
import type { Context } from 'openapi-backend';
import type { KnownKeys } from '../api-keys/known-keys';
import { apiKeyPattern, hashApiKey, type ApiKeyScope } from '../api-key-format';
import type { ApiKeysRepository, Principal } from '../db/api-keys-repository';
import type { Exchange } from './exchange';
import { ProblemError } from '../errors';
import type { AuthFailureBudget } from './rate-limit';

function bearerToken(context: Context): string | undefined {
  const header = context.request.headers['authorization'];
  const match = typeof header === 'string' ? /^Bearer +(\S+) *$/i.exec(header) : null;
  return match?.[1];
}

/** What keeps bad keys from costing a database lookup each: the address's budget, and the keys known to exist. */
export interface FailureGuard {
  failures: AuthFailureBudget;
  knownKeys: KnownKeys;
}

/**
 * The security handler for `bearerAuth`: the key's principal, or false to refuse it.
 *
 * A key the instance knows to exist is looked up whatever its address has spent, so clients that
 * share an address with a flood of bad keys keep working; a well-formed key the instance does not
 * know first waits for it to read the keys created lately, so a key made a moment ago is known
 * too. Anything still unknown takes one failure from its address's budget before it is looked up
 * (a key whose creation time the read missed is found so), and once the budget is spent the
 * address gets a 429 with nothing looked up.
 */
export function bearerAuth(apiKeys: ApiKeysRepository, guard?: FailureGuard) {
  const authenticate = async (
    keyHash: string | undefined,
    exchange: Exchange,
  ): Promise<Principal | undefined> => {
    if (!guard) return keyHash === undefined ? undefined : apiKeys.findActive(keyHash);
    const { failures, knownKeys } = guard;
    if (keyHash !== undefined) {
      if (!knownKeys.has(keyHash)) await knownKeys.catchUp();
      if (knownKeys.has(keyHash)) {
        const principal = await apiKeys.findActive(keyHash);
        if (principal) return principal;
        // Revoked or expired since it was read: from now on it pays like any other bad key.
        knownKeys.forget(keyHash);
        await failures.take(exchange.clientAddress());
        return undefined;
      }
    }
    const retryAfter = await failures.take(exchange.clientAddress());
    if (retryAfter !== undefined) {
      throw new ProblemError(
        'rate-limited',
        `This address has failed authentication ${failures.perMinute} times this minute; retry after ${retryAfter} seconds.`,
        {
          headers: { 'Retry-After': String(retryAfter) },
        },
      );
    }
    const principal = keyHash === undefined ? undefined : await apiKeys.findActive(keyHash);
    if (principal) knownKeys.add(keyHash!);
    return principal;
  };

  return async (context: Context, exchange: Exchange): Promise<Principal | false> => {
    const token = bearerToken(context);
    const keyHash =
      token !== undefined && apiKeyPattern.test(token) ? hashApiKey(token) : undefined;
    const principal = await authenticate(keyHash, exchange);
    if (!principal) return false;
    // Bookkeeping for `apikey list`; a request never waits for it or fails by it.
    apiKeys.recordUse(principal.keyId).catch(() => {});
    return principal;
  };
}

/** openapi-backend's unauthorizedHandler: why the key was refused, as RFC 6750 says it. */
export function refuseUnauthenticated(context: Context): never {
  // A security handler that threw (the database is down, the address spent its failures) is not
  // a bad key: report that.
  const outcome = context.security?.bearerAuth as { error?: unknown } | undefined;
  if (outcome?.error) throw outcome.error;
  if (context.request.headers['authorization'] === undefined) {
    throw new ProblemError(
      'unauthenticated',
      'This request needs an API key: send Authorization: Bearer <API_KEY>.',
      {
        headers: { 'WWW-Authenticate': 'Bearer realm="task-tracker"' },
      },
    );
  }
  const header = String(context.request.headers['authorization']);
  if (!/^Bearer(?: |$)/i.test(header)) {
    // A key sent bare, or under another scheme, is told apart from a key that is wrong.
    const scheme = /^([A-Za-z][\w!#$%&'*+.^`|~-]*) +\S/.exec(header)?.[1];
    const detail =
      scheme === undefined
        ? 'The Authorization header has no scheme: send Authorization: Bearer <API_KEY> (the word Bearer, a space, then the key).'
        : `The Authorization header uses the ${scheme} scheme; this API takes Bearer: send Authorization: Bearer <API_KEY>.`;
    throw new ProblemError('unauthenticated', detail, {
      headers: {
        'WWW-Authenticate': `Bearer realm="task-tracker", error="invalid_token", error_description="${detail}"`,
      },
    });
  }
  throw new ProblemError('unauthenticated', 'The API key is malformed, unknown or revoked.', {
    headers: {
      'WWW-Authenticate':
        'Bearer realm="task-tracker", error="invalid_token", error_description="The API key is malformed, unknown or revoked."',
    },
  });
}

export function requireScope(context: Context): void {
  const needed = (context.operation as { 'x-required-scope'?: ApiKeyScope })['x-required-scope'];
  const principal = context.security?.bearerAuth as Principal;
  if (needed !== undefined && !principal.scopes.includes(needed)) {
    throw new ProblemError(
      'insufficient-scope',
      `This operation needs the ${needed} scope; the key has ${principal.scopes.join(', ')}.`,
      {
        headers: {
          'WWW-Authenticate': `Bearer realm="task-tracker", error="insufficient_scope", scope="${needed}"`,
        },
      },
    );
  }
}
