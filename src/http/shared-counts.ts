/** Rate-limit counts in Redis, shared by instances, with memory to fall back on while Redis is away. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClientRateLimitInfo, MemoryStore, Options, Store } from 'express-rate-limit';
import type { Logger } from 'pino';
import { RedisStore } from 'rate-limit-redis';
import { createClient } from 'redis';
import { redact } from '../config';
import { MemoryCounts } from './memory-counts';

const keyPrefix = 'task-tracker:';
/** While Redis is connected but silent, how often it is asked whether it answers again. */
const probeIntervalMs = 1000;

class RedisTimeoutError extends Error {}

/** The promise, or a rejection once `ms` have passed without it settling. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new RedisTimeoutError(`redis did not answer within ${ms} ms`)),
      ms,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The Redis connection and whether counts may go there now: while it is connected and answers.
 * node-redis bounds only the wait to send a command, not the wait for its answer, so a Redis
 * that stops answering (frozen, or cut off without the connection closing) is timed here; after
 * one command goes unanswered, counts stay in memory until Redis answers a PING again.
 */
export class SharedCounts {
  private readonly client: ReturnType<typeof createClient>;
  private readonly stores: FailoverStore[] = [];
  private answering = true;
  private probing = false;
  private closed = false;
  /** Whether this outage has been logged: the client reports each of its reconnection attempts. */
  private reportedAway = false;

  constructor(
    private readonly url: string,
    readonly timeoutMs: number,
    private readonly logger: Logger,
  ) {
    this.client = createClient({
      url,
      // A command while Redis is away fails at once instead of queueing until it is back.
      disableOfflineQueue: true,
    });
    this.client.on('error', (error: Error) => this.away(error));
    this.client.on('ready', () => void this.share());
    // Never awaited: start-up does not wait for Redis, and the client reconnects by itself.
    this.client.connect().catch(() => {});
  }

  store(name: string): FailoverStore {
    const store = new FailoverStore(
      new RedisStore({
        prefix: `${keyPrefix}${name}:`,
        sendCommand: (...args: string[]) => this.client.sendCommand(args),
      }),
      this,
    );
    this.stores.push(store);
    return store;
  }

  get usable(): boolean {
    return this.client.isReady && this.answering;
  }

  /** Runs a Redis command within the timeout; one that goes unanswered sends counts to memory. */
  async command<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await within(run(), this.timeoutMs);
    } catch (error) {
      if (error instanceof RedisTimeoutError && this.answering) {
        this.answering = false;
        this.away(error);
        void this.probe();
      }
      throw error;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const store of this.stores) store.shutdown();
    if (this.client.isReady && this.answering) await this.client.close();
    else if (this.client.isOpen) this.client.destroy();
  }

  /** Connected (again): loads the stores' scripts, which a restarted Redis has lost, then counts there. */
  private async share(): Promise<void> {
    try {
      await Promise.all(this.stores.map((store) => store.loadScripts()));
    } catch {
      return; // Redis failed again meanwhile; that is logged, and the next 'ready' tries again
    }
    this.answering = true;
    this.reportedAway = false;
    this.logger.info(
      { redis: redact(this.url) },
      'redis connected: rate limits are shared across instances',
    );
  }

  private away(error: Error): void {
    if (this.reportedAway || this.closed) return;
    this.reportedAway = true;
    this.logger.warn(
      { redis: redact(this.url), err: error },
      'redis unavailable: rate limits count per instance until it answers again',
    );
  }

  /** While the connection stays up but Redis is silent, asks it once a second whether it answers. */
  private async probe(): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    while (!this.answering && !this.closed) {
      await sleep(probeIntervalMs);
      // A lost connection ends in 'ready' once it is back, which shares again.
      if (!this.client.isReady) continue;
      try {
        await within(this.client.ping(), this.timeoutMs);
        await this.share();
      } catch {
        // still silent
      }
    }
    this.probing = false;
  }
}

/**
 * Counts in Redis while it is usable and holds this store's scripts, in memory otherwise, and in
 * memory for any command Redis fails or does not answer in time.
 */
class FailoverStore implements Store {
  private readonly local = new MemoryCounts();
  private options?: Options;
  /** Whether Redis has this store's scripts since it last connected. */
  private scriptsLoaded = false;
  private loading?: Promise<void>;

  constructor(
    private readonly shared: RedisStore,
    private readonly redis: SharedCounts,
  ) {}

  init(options: Options): void {
    this.options = options;
    this.local.init(options);
    // A store made after Redis became ready loads its scripts now, not at its first count (which would count here).
    if (this.redis.usable) this.loadScripts().catch(() => {});
  }

  /** Loads the Redis scripts (again); rejects when Redis does not answer, leaving the counts in memory. */
  loadScripts(): Promise<void> {
    if (!this.options) return Promise.resolve(); // not in use yet; the first count loads them
    this.scriptsLoaded = false;
    this.loading ??= within(this.shared.init(this.options), this.redis.timeoutMs).then(
      () => {
        this.scriptsLoaded = true;
        this.loading = undefined;
      },
      (error: unknown) => {
        this.loading = undefined;
        throw error;
      },
    );
    return this.loading;
  }

  get(key: string): Promise<ClientRateLimitInfo | undefined> {
    return this.either((store) => store.get(key));
  }

  increment(key: string): Promise<ClientRateLimitInfo> {
    return this.either((store) => store.increment(key));
  }

  decrement(key: string): Promise<void> {
    return this.either((store) => store.decrement(key));
  }

  resetKey(key: string): Promise<void> {
    return this.either((store) => store.resetKey(key));
  }

  shutdown(): void {
    this.local.shutdown();
  }

  private async either<T>(command: (store: RedisStore | MemoryStore) => Promise<T>): Promise<T> {
    if (this.redis.usable) {
      // A load that failed (Redis slow just then) is tried again; this request does not wait for it.
      if (!this.scriptsLoaded && !this.loading) this.loadScripts().catch(() => {});
      if (this.scriptsLoaded) {
        try {
          return await this.redis.command(() => command(this.shared));
        } catch {
          // Redis went away or is silent: this request counts here instead (logged once an outage).
        }
      }
    }
    return command(this.local);
  }
}
