/**
 * Limits counted by express-rate-limit's stores (in Redis when instances share them): requests
 * per verified API key, with IETF RateLimit headers (draft 8) on every answer past
 * authentication and a 429 problem with Retry-After past the limit; failed authentications per
 * client address, so that made-up keys cost the service neither a database lookup each nor
 * memory per key once the address has spent its budget; and redeliveries per webhook endpoint.
 */
import type { Request, Response } from 'express';
import { ipKeyGenerator, rateLimit, type Options, type Store } from 'express-rate-limit';
import type { Logger } from 'pino';
import type { CountingStores } from './counting-stores';
import { ProblemError } from '../errors';

const windowMs = 60_000;

/** Counts a request against its verified key's quota; rejects with the 429 problem past it. */
export type CountRequest = (keyId: string, req: Request, res: Response) => Promise<void>;

/**
 * Counts requests past the one being made against its key's quota: a bulk change counts one
 * request per 100 tasks (contract-decisions: "Bulk changes"), the first of them when it arrived.
 * The answer's `RateLimit` header then says what is left after all of them, not after the first
 * alone. Rejects with the 429 problem when the count passes the limit.
 */
export type CountMoreRequests = (
  keyId: string,
  requests: number,
  why: string,
  res: Response,
) => Promise<void>;

export interface KeyRateLimit {
  countRequest: CountRequest;
  countMore: CountMoreRequests;
}

export function perKeyRateLimit(options: {
  perMinute: number;
  stores: CountingStores;
  logger: Logger;
}): KeyRateLimit | undefined {
  const { perMinute, stores, logger } = options;
  if (perMinute === 0) return undefined;
  const store = stores.create('rate-limit');
  const storeKey = (keyId: string) => `key:${keyId}`;
  const identifier = `${perMinute}-in-1min`;
  const middleware = rateLimit({
    windowMs,
    limit: perMinute,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    identifier,
    // The key's id, not the key: the store (Redis, say) never sees a credential.
    keyGenerator: (_req, res) => storeKey(res.locals.rateLimitKeyId as string),
    // A store that fails must not take the API down with it.
    passOnStoreError: true,
    store,
    logger,
    handler: (_req, res, next) => {
      const retryAfter = res.getHeader('Retry-After');
      next(
        new ProblemError(
          'rate-limited',
          `This API key has used its ${perMinute} requests for this minute; retry after ${retryAfter} seconds.`,
        ),
      );
    },
  });
  const countRequest: CountRequest = (keyId, req, res) => {
    res.locals.rateLimitKeyId = keyId;
    return new Promise((resolve, reject) => {
      void middleware(req, res, (error?: unknown) => (error ? reject(error) : resolve()));
    });
  };
  const countMore: CountMoreRequests = async (keyId, requests, why, res) => {
    let counted: Awaited<ReturnType<Store['increment']>> | undefined;
    try {
      // The store counts one hit at a time; a bulk change adds at most 9.
      for (let i = 0; i < requests; i++) counted = await store.increment(storeKey(keyId));
    } catch {
      return; // as the middleware does: a store that fails must not take the API down with it
    }
    if (counted === undefined) return;
    // In place of the middleware's, which counted the request as one: as it writes it (draft 8).
    if (!res.headersSent)
      res.setHeader(
        'RateLimit',
        `"${identifier}"; r=${Math.max(0, perMinute - counted.totalHits)}; t=${resetSeconds(counted.resetTime)}`,
      );
    if (counted.totalHits <= perMinute) return;
    const retryAfter = secondsUntil(counted.resetTime);
    throw new ProblemError(
      'rate-limited',
      `This API key has used its ${perMinute} requests for this minute (${why}); retry after ${retryAfter} seconds.`,
      { headers: { 'Retry-After': String(retryAfter) } },
    );
  };
  return { countRequest, countMore };
}

/** Whole seconds, none or more, until a window that ends at `resetTime`, as express-rate-limit's `t` counts them. */
function resetSeconds(resetTime: Date | undefined): number {
  if (resetTime === undefined) return Math.ceil(windowMs / 1000);
  return Math.max(0, Math.ceil((resetTime.getTime() - Date.now()) / 1000));
}

/** Whole seconds, at least one, until a window that ends at `resetTime` (a full window when unknown). */
function secondsUntil(resetTime: Date | undefined): number {
  return Math.max(
    1,
    Math.ceil(((resetTime?.getTime() ?? Date.now() + windowMs) - Date.now()) / 1000),
  );
}

/** Failed authentications per client address. */
export interface AuthFailureBudget {
  /**
   * Takes one failure from the address's budget, before the lookup it pays for: undefined when
   * one was left, else the seconds until the budget refills. Counting first gives requests that
   * arrive together distinct places in the count, so together they never exceed it.
   */
  take(address: string): Promise<number | undefined>;
  readonly perMinute: number;
}

export function authFailureBudget(options: {
  perMinute: number;
  stores: CountingStores;
}): AuthFailureBudget | undefined {
  const { perMinute, stores } = options;
  if (perMinute === 0) return undefined;
  const store: Store = stores.create('auth-failures');
  void store.init?.({ windowMs } as Options);
  // express-rate-limit's own grouping: an IPv6 client is its /56, which one machine usually holds whole.
  const bucket = (address: string) => ipKeyGenerator(address);
  return {
    perMinute,
    async take(address) {
      const counted = await store.increment(bucket(address));
      if (counted.totalHits <= perMinute) return undefined;
      const msLeft = (counted.resetTime?.getTime() ?? Date.now() + windowMs) - Date.now();
      return Math.max(1, Math.ceil(msLeft / 1000));
    },
  };
}

/** A count per key over a minute's window that refuses past `limit` with the 429 problem `refusal` words. */
function minuteLimit(
  stores: CountingStores,
  name: string,
  limit: number,
  refusal: (retryAfterSeconds: number) => string,
): (key: string) => Promise<void> {
  const store: Store = stores.create(name);
  void store.init?.({ windowMs } as Options);
  return async (key) => {
    const { totalHits, resetTime } = await store.increment(key);
    if (totalHits <= limit) return;
    const retryAfter = secondsUntil(resetTime);
    throw new ProblemError('rate-limited', refusal(retryAfter), {
      headers: { 'Retry-After': String(retryAfter) },
    });
  };
}

/** The documented most redeliveries one webhook endpoint takes in a minute. */
export const redeliveriesPerMinute = 60;

/** Counts a redelivery to the tenant's endpoint; rejects with the 429 problem past the limit. */
export type CountRedelivery = (tenantId: string, endpointId: string) => Promise<void>;

export function redeliveryLimit(options: { stores: CountingStores }): CountRedelivery {
  const count = minuteLimit(
    options.stores,
    'redeliveries',
    redeliveriesPerMinute,
    (retryAfter) =>
      `This webhook endpoint has had its ${redeliveriesPerMinute} redeliveries for this minute; retry after ${retryAfter} seconds.`,
  );
  // By tenant too: another tenant naming this endpoint's id (a 404) spends nothing of its budget.
  return (tenantId, endpointId) => count(`${tenantId}:${endpointId}`);
}

/** The documented most webhook endpoint registrations, changes and deletions of one tenant in a minute. */
export const endpointChangesPerMinute = 60;

/** Counts a registration, change or deletion of one of the tenant's webhook endpoints; rejects with the 429 problem past the limit. */
export function endpointChangeLimit(options: {
  stores: CountingStores;
}): (tenantId: string) => Promise<void> {
  return minuteLimit(
    options.stores,
    'endpoint-changes',
    endpointChangesPerMinute,
    (retryAfter) =>
      `This tenant has made its ${endpointChangesPerMinute} webhook endpoint changes for this minute; retry after ${retryAfter} seconds.`,
  );
}
