/**
 * Bearer API keys (RFC 6750): who is calling, and whether the key may do what the operation
 * needs (its `x-required-scope` in the document).
 */
import type { Context } from 'openapi-backend';
import { apiKeyPattern, hashApiKey, type ApiKeyScope } from '../api-key-format';
import type { ApiKeysRepository, Principal } from '../db/api-keys-repository';
import type { Exchange } from './exchange';
import { ProblemError } from './problems';
import type { AuthFailureBudget } from './rate-limit';

function bearerToken(context: Context): string | undefined {
  const header = context.request.headers['authorization'];
  const match = typeof header === 'string' ? /^Bearer +(\S+) *$/i.exec(header) : null;
  return match?.[1];
}

/**
 * The hashes of the keys this instance accepted most recently. Only an accepted key enters, so
 * however many made-up tokens arrive, this holds at most `capacity` entries.
 */
class RecentlyAccepted {
  private readonly hashes = new Set<string>();

  constructor(private readonly capacity: number) {}

  has(hash: string): boolean {
    return this.hashes.has(hash);
  }

  add(hash: string): void {
    // A Set iterates in insertion order: re-adding makes the hash the newest, the first is the oldest.
    this.hashes.delete(hash);
    this.hashes.add(hash);
    if (this.hashes.size > this.capacity) this.hashes.delete(this.hashes.values().next().value!);
  }

  delete(hash: string): void {
    this.hashes.delete(hash);
  }
}

/**
 * The security handler for `bearerAuth`: the key's principal, or false to refuse it. Each
 * refusal spends one of the client address's failures; once they are spent, the address gets a
 * 429 before any lookup, except for a key this instance accepted lately (it is still looked up,
 * so a revoked key is refused at once), so that clients sharing an address with a flood keep
 * working.
 */
export function bearerAuth(apiKeys: ApiKeysRepository, failures?: AuthFailureBudget) {
  const accepted = new RecentlyAccepted(10_000);
  return async (context: Context, exchange: Exchange): Promise<Principal | false> => {
    const token = bearerToken(context);
    const keyHash = token !== undefined && apiKeyPattern.test(token) ? hashApiKey(token) : undefined;
    if (failures && !(keyHash !== undefined && accepted.has(keyHash))) {
      const retryAfter = await failures.secondsUntilRefill(exchange.clientAddress());
      if (retryAfter !== undefined) {
        throw new ProblemError('rate-limited', `This address has failed authentication ${failures.perMinute} times this minute; retry after ${retryAfter} seconds.`, {
          headers: { 'Retry-After': String(retryAfter) },
        });
      }
    }
    const principal = keyHash === undefined ? undefined : await apiKeys.findActive(keyHash);
    if (!principal) {
      if (keyHash !== undefined) accepted.delete(keyHash);
      await failures?.spend(exchange.clientAddress());
      return false;
    }
    accepted.add(keyHash!);
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
