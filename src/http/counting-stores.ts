/**
 * Where the rate limits keep their counts: express-rate-limit stores that count in Redis
 * (rate-limit-redis) while it answers, so that instances share one count, and in this instance's
 * memory otherwise. Redis is optional at run time: the service starts without it, a request never
 * waits on it longer than `redisTimeoutMs`, and counts are shared again once it is back.
 */
import type { MemoryStore, Store } from 'express-rate-limit';
import type { Logger } from 'pino';
import { MemoryCounts } from './memory-counts';

export interface CountingStores {
  /** A new store for one limiter; `name` keeps its Redis keys apart from other limiters'. */
  create(name: string): Store;
  close(): Promise<void>;
}

export function createCountingStores(options: {
  redisUrl?: string;
  redisTimeoutMs: number;
  logger: Logger;
}): CountingStores {
  const { redisUrl, redisTimeoutMs, logger } = options;
  if (redisUrl === undefined) {
    const stores: MemoryStore[] = [];
    return {
      create() {
        const store = new MemoryCounts();
        stores.push(store);
        return store;
      },
      async close() {
        for (const store of stores) store.shutdown();
      },
    };
  }
  // Loaded only when Redis is configured: its client is among the largest modules a start would load.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on this path only
  const { SharedCounts } = require('./shared-counts') as typeof import('./shared-counts');
  const redis = new SharedCounts(redisUrl, redisTimeoutMs, logger);
  return {
    create: (name) => redis.store(name),
    close: () => redis.close(),
  };
}
