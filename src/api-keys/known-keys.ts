/**
 * The hashes of every active API key, held in memory so that an instance tells a key that exists
 * from a made-up one without asking the database: a request whose key is known never draws on its
 * address's failure budget, however many bad keys that address sends. The database still has the
 * last word on every request (a revoked or expired key is refused at once); this set only decides
 * who may ask it.
 *
 * The set is read whole at start, before the service listens, and again every `reloadMs` (which
 * drops keys revoked or expired meanwhile). Keys created since the last read, by the CLI in another
 * process, are read on demand (`catchUp`): at most one such read begins every `catchUpGapMs` on an
 * instance, however many requests ask for it, and each reads only the keys created lately.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { ApiKeysRepository } from '../db/api-keys-repository';

/** Keys read per statement when the whole set is read. */
const pageSize = 10_000;
/**
 * How far before the last read began a catch-up reads again: a key's creation time comes from the
 * clock of the process that made it, and the key commits a moment after it.
 */
const overlapMs = 60_000;

export interface KnownKeys {
  has(keyHash: string): boolean;
  /** A key the database has just accepted. */
  add(keyHash: string): void;
  /** A key the database has just refused (revoked or expired since it was read). */
  forget(keyHash: string): void;
  /** Resolves once a read of the keys created lately, begun after this call, has ended. */
  catchUp(): Promise<void>;
  stop(): Promise<void>;
}

export const catchUpGapMs = 100;
export const reloadMs = 10 * 60_000;

export async function startKnownKeys(
  apiKeys: ApiKeysRepository,
  options: { logger: Logger },
): Promise<KnownKeys> {
  const { logger } = options;
  let hashes = new Set<string>();
  /** Keys added while the whole set is being read, kept for the set that read makes. */
  let addedDuringReload: Set<string> | undefined;
  /** When the newest read that saw every key created before it began (this instance's clock). */
  let readUpTo = 0;
  let lastCatchUpBegan = 0;
  let nextCatchUp: Promise<void> | undefined;
  let stopping = false;
  // Reads run one at a time, so none replaces what a later one found.
  let reads: Promise<unknown> = Promise.resolve();
  const serially = <T>(read: () => Promise<T>): Promise<T> => {
    const result = reads.then(read);
    reads = result.catch(() => {});
    return result;
  };

  const reload = async () => {
    const began = Date.now();
    const fresh = new Set<string>();
    addedDuringReload = new Set();
    try {
      for (
        let after = '', page: Array<{ key_id: string; key_hash: string }> = [];
        ;
        after = page[page.length - 1].key_id
      ) {
        page = await apiKeys.activeHashes(after, pageSize);
        for (const row of page) fresh.add(row.key_hash);
        if (page.length < pageSize) break;
      }
      for (const hash of addedDuringReload) fresh.add(hash);
      hashes = fresh;
      readUpTo = began;
    } finally {
      addedDuringReload = undefined;
    }
  };

  const readRecent = async () => {
    const began = Date.now();
    for (const hash of await apiKeys.activeHashesCreatedSince(new Date(readUpTo - overlapMs)))
      hashes.add(hash);
    readUpTo = began;
  };

  await serially(reload);
  const reloading = setInterval(() => {
    serially(reload).catch((error: unknown) =>
      logger.warn({ err: error }, 'reading the API keys failed; the keys read before stay known'),
    );
  }, reloadMs);

  return {
    has: (keyHash) => hashes.has(keyHash),
    add(keyHash) {
      hashes.add(keyHash);
      addedDuringReload?.add(keyHash);
    },
    forget(keyHash) {
      hashes.delete(keyHash);
      addedDuringReload?.delete(keyHash);
    },
    catchUp() {
      // Callers that arrive before the next read begins share it; later ones wait for the one after.
      nextCatchUp ??= serially(async () => {
        const wait = lastCatchUpBegan + catchUpGapMs - Date.now();
        if (wait > 0 && !stopping) await sleep(wait);
        nextCatchUp = undefined;
        lastCatchUpBegan = Date.now();
        await readRecent();
      });
      return nextCatchUp;
    },
    async stop() {
      stopping = true;
      clearInterval(reloading);
      await reads;
    },
  };
}
