/**
 * Holds long-polling feed requests and answers them when their tenant's events are numbered, on
 * this instance or any other. One watcher per instance: it hears at once of what this instance
 * numbers, and while anyone waits it reads the waiting tenants' last sequences every 100 ms, in
 * one query, so waiting requests neither poll the database nor hold a connection.
 *
 * When a tenant's last sequence moves, its waiting polls are answered from one read of the
 * tenant's new events, each filtered in memory (feed-pages.ts); a poll reads on its own only
 * when that read cannot answer it. A poll whose cursor is no further than the last sequence the
 * watcher knows joins them without a read of its own: consumers asking again after their answers
 * cost one shared read, however many they are.
 *
 * A key holds at most `perKey` polls at once and a tenant `perTenant`: past either, a poll
 * answers at once, as one without `wait`.
 */
import type { Logger } from 'pino';
import type { FeedPage, FeedQuery } from './events-repository';
import type { EventRepositories } from './repositories';
import { pageFromRows, sharedRead } from './feed-pages';
import type { EventMetrics } from './metrics';

export interface FeedWatcher {
  /** A place for a long poll of this key, or undefined when the key or its tenant holds all it may. */
  enter(principal: { keyId: string; tenantId: string }): LongPoll | undefined;
  /** What numbering on this instance just gave each tenant. */
  numbered(lastSequences: Map<string, number>): void;
  stop(): void;
}

export interface LongPoll {
  /**
   * An empty page at `after` to wait from, without a read of its own, when the watcher knows the
   * tenant's events up to at least `after`: what is there after it comes from the shared read.
   */
  fromKnown(after: number | undefined): FeedPage | undefined;
  /**
   * Waits for a page with events after `page.position` matching the query, and answers it; at
   * the timeout, when `gone` aborts (the client left) or when the service stops, answers the
   * latest empty page. Rejects as the feed's own read does (a cursor whose events retention
   * removed meanwhile).
   */
  next(
    page: FeedPage,
    query: Omit<FeedQuery, 'after'>,
    timeoutMs: number,
    gone?: AbortSignal,
  ): Promise<FeedPage>;
  /** Gives the place back; once, when the request is answered. */
  leave(): void;
}

interface Waiter {
  query: Omit<FeedQuery, 'after'>;
  /** The page the poll would answer now: empty, at the position it waits after. */
  page: FeedPage;
  answer(page: FeedPage): void;
  fail(error: unknown): void;
}

interface Tenant {
  waiters: Set<Waiter>;
  /** The highest last sequence read for the tenant; 0 until one is. */
  last: number;
  known: boolean;
  /** When a poll last left or the last sequence was last read: a tenant nobody waits on is forgotten after a while. */
  touchedAt: number;
  reading: boolean;
}

/** How often the waiting tenants' last sequences are read: the most a long poll lags a change made on another instance. */
const pollMs = 100;
/** The most events one shared read takes; a poll it does not reach reads on its own. */
const sharedReadBound = 500;
/** A tenant nobody waits on is remembered this long (the longest wait), for the polls its consumers send next. */
const rememberMs = 30_000;

export function startFeedWatcher(
  repositories: EventRepositories,
  options: { logger: Logger; metrics: EventMetrics; perKey: number; perTenant: number },
): FeedWatcher {
  const { events } = repositories;
  const tenants = new Map<string, Tenant>();
  const pollsPerKey = new Map<string, number>();
  const pollsPerTenant = new Map<string, number>();
  let stopped = false;

  const tenant = (tenantId: string): Tenant => {
    let entry = tenants.get(tenantId);
    if (entry === undefined)
      tenants.set(
        tenantId,
        (entry = {
          waiters: new Set(),
          last: 0,
          known: false,
          touchedAt: Date.now(),
          reading: false,
        }),
      );
    return entry;
  };

  /** Answers the tenant's polls that wait after a sequence it has passed, from one read of its events. */
  const serve = (tenantId: string, entry: Tenant) => {
    if (entry.reading) return;
    const behind = [...entry.waiters].filter((waiter) => waiter.page.position < entry.last);
    if (behind.length === 0) return;
    entry.reading = true;
    const last = entry.last;
    // No further back than the bound: a poll far behind the others reads on its own rather than leave them unserved.
    const from = Math.max(
      Math.min(...behind.map((waiter) => waiter.page.position)),
      last - sharedReadBound,
    );
    let failed = false;
    events
      .rowsAfter(tenantId, from, last, sharedReadBound)
      .then(
        async (rows) => {
          const read = sharedRead(rows, last, sharedReadBound);
          await Promise.all(
            behind
              .map(async (waiter) => {
                const query = { ...waiter.query, after: waiter.page.position };
                const page = pageFromRows(read, query) ?? (await events.page(tenantId, query));
                if (!entry.waiters.has(waiter)) return;
                if (page.events.length > 0) waiter.answer(page);
                else waiter.page = page;
              })
              .map((served, i) => served.catch((error: unknown) => behind[i].fail(error))),
          );
        },
        (error: unknown) => {
          failed = true;
          options.logger.warn(
            { err: error },
            'reading the event feed for waiting polls failed; trying again at the next look',
          );
        },
      )
      .finally(() => {
        entry.reading = false;
        // Polls that joined meanwhile are served now; after a failure, at the watcher's next look, not in a loop.
        if (!failed) serve(tenantId, entry);
      });
  };

  const announce = (lastSequences: Map<string, number>) => {
    const now = Date.now();
    for (const [tenantId, last] of lastSequences) {
      const entry = tenants.get(tenantId);
      if (entry === undefined) continue;
      entry.last = Math.max(entry.last, last);
      entry.known = true;
      entry.touchedAt = now;
      serve(tenantId, entry);
    }
  };

  let polling = false;
  const timer = setInterval(() => {
    const waitedOn: string[] = [];
    for (const [tenantId, entry] of tenants) {
      if (entry.waiters.size > 0) waitedOn.push(tenantId);
      else if (Date.now() - entry.touchedAt > rememberMs) tenants.delete(tenantId);
    }
    if (polling || waitedOn.length === 0) return;
    polling = true;
    events
      .lastSequences(waitedOn)
      .then(
        (found) => {
          // A tenant with nothing numbered yet has no row: its last sequence is 0.
          for (const tenantId of waitedOn) if (!found.has(tenantId)) found.set(tenantId, 0);
          announce(found);
        },
        (error: unknown) =>
          options.logger.warn({ err: error }, 'watching the event feed failed; trying again'),
      )
      .finally(() => {
        polling = false;
      });
  }, pollMs);

  const count = (counts: Map<string, number>, id: string, by: number) => {
    const held = (counts.get(id) ?? 0) + by;
    if (held === 0) counts.delete(id);
    else counts.set(id, held);
  };

  return {
    enter({ keyId, tenantId }) {
      if (stopped) return undefined;
      if (options.perKey > 0 && (pollsPerKey.get(keyId) ?? 0) >= options.perKey) return undefined;
      if (options.perTenant > 0 && (pollsPerTenant.get(tenantId) ?? 0) >= options.perTenant)
        return undefined;
      count(pollsPerKey, keyId, 1);
      count(pollsPerTenant, tenantId, 1);
      let left = false;
      return {
        fromKnown(after) {
          const entry = tenants.get(tenantId);
          if (after === undefined || entry === undefined || !entry.known || after > entry.last)
            return undefined;
          return { events: [], position: after, hasMore: false };
        },
        next(page, query, timeoutMs, gone) {
          if (stopped || gone?.aborted) return Promise.resolve(page);
          const entry = tenant(tenantId);
          return new Promise<FeedPage>((resolve, reject) => {
            const leftEarly = () => waiter.answer(waiter.page);
            const done = () => {
              clearTimeout(timeout);
              gone?.removeEventListener('abort', leftEarly);
              if (entry.waiters.delete(waiter)) options.metrics.longPolls(-1);
              entry.touchedAt = Date.now();
            };
            const waiter: Waiter = {
              query,
              page,
              answer(answered) {
                done();
                resolve(answered);
              },
              fail(error) {
                done();
                reject(error);
              },
            };
            const timeout = setTimeout(() => waiter.answer(waiter.page), timeoutMs);
            gone?.addEventListener('abort', leftEarly, { once: true });
            entry.waiters.add(waiter);
            options.metrics.longPolls(1);
            // The watcher may know of events newer than this poll's read.
            serve(tenantId, entry);
          });
        },
        leave() {
          if (left) return;
          left = true;
          count(pollsPerKey, keyId, -1);
          count(pollsPerTenant, tenantId, -1);
        },
      };
    },
    numbered: announce,
    stop() {
      stopped = true;
      clearInterval(timer);
      for (const entry of tenants.values())
        for (const waiter of [...entry.waiters]) waiter.answer(waiter.page);
    },
  };
}
