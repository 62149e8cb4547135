/**
 * Starting and stopping the service: database, migrations, router and HTTP server. Tests start
 * it on port 0 and read the port it got.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Knex } from 'knex';
import type { DestinationStream, Logger } from 'pino';
import { Registry } from 'prom-client';
import { startKnownKeys, type KnownKeys } from './api-keys/known-keys';
import { startCleanup } from './cleanup/expired-rows';
import { startEventNumbering, type EventNumbering } from './events/event-numbering';
import { startFeedWatcher, type FeedWatcher } from './events/feed-watcher';
import { createEventMetrics } from './events/metrics';
import type { Config } from './config';
import { backgroundPoolSizes, createKnex } from './db/knex';
import { migrateToLatest } from './db/migrate';
import { createRepositories, type Repositories } from './all-repositories';
import { createApp, httpServerFor } from './http/app';
import { answerUnparsableRequests } from './http/client-errors';
import { createCountingStores, type CountingStores } from './http/counting-stores';
import { loadDocument } from './http/document';
import { createMetrics } from './http/observability';
import { createLogger, knexLogFor } from './logger';
import { createOperationRouter } from './http/operation-router';
import type { VersionSet } from './http/older-versions';
import { bulkFence } from './app/bulk-fence';
import { createUnitOfWork } from './app/unit-of-work';
import {
  authFailureBudget,
  endpointChangeLimit,
  perKeyRateLimit,
  redeliveryLimit,
} from './http/rate-limit';
import { shutdownSignal } from './http/shutdown';
import { resolverFor, startWebhookWork } from './webhooks/deliveries';
import type { DeliveryThread } from './webhooks/delivery-thread';
import { startDeliveryThreadWhenNeeded } from './webhooks/thread-when-needed';
import type { HostResolver } from './webhooks/dns-lookups';
import { createWebhookMetrics } from './webhooks/metrics';
import { targetGuard } from './webhooks/target-guard';

export interface RunningService {
  /** The base URL, without `/v1`: `http://127.0.0.1:3000`. */
  url: string;
  knex: Knex;
  logger: Logger;
  stop(): Promise<void>;
}

/** The longest a scrape of /metrics waits for a count the background work reads from the database. */
const scrapeCountTimeoutMs = 1000;

/**
 * The background jobs' repositories: numbering and the feed on one pool; clean-up and the
 * webhook counts a scrape reads on another (on SQLite, where every pool is the one connection,
 * the webhook work too).
 */
interface BackgroundRepositories {
  numberingRepositories: Repositories;
  cleanupRepositories: Repositories;
}

/** The background jobs, on pools of their own: numbering, the feed watcher, webhook planning and delivery. */
interface BackgroundWork {
  feed: FeedWatcher;
  numbering: EventNumbering;
  /** Webhook host names for registration, looked up where deliveries look them up: one cache. */
  resolver: Pick<HostResolver, 'resolve'>;
  /** Stops them in the order that hands their work on whole: numbering, planning, delivery. */
  stop(): Promise<void>;
}

function startBackgroundWork(
  { numberingRepositories, cleanupRepositories }: BackgroundRepositories,
  config: Config,
  {
    logger,
    registry,
    webhookThreadEntry,
  }: { logger: Logger; registry: Registry; webhookThreadEntry?: string },
): BackgroundWork {
  // What the background work counts in the database it counts on its own pools, never the requests'.
  const eventMetrics = createEventMetrics(registry, numberingRepositories, {
    logger,
    scrapeTimeoutMs: scrapeCountTimeoutMs,
  });
  // On MySQL webhook planning and delivery run in a thread of their own (delivery-thread.ts),
  // started once some endpoint is enabled; SQLite's one connection cannot be shared with a thread.
  let thread: DeliveryThread | undefined;
  const webhookMetrics = createWebhookMetrics(registry, cleanupRepositories, {
    logger,
    scrapeTimeoutMs: scrapeCountTimeoutMs,
    beforeScrape: async () => thread?.flushMetrics(scrapeCountTimeoutMs),
  });
  const feed = startFeedWatcher(numberingRepositories, {
    logger,
    metrics: eventMetrics,
    perKey: config.longPollsPerKey,
    perTenant: config.longPollsPerTenant,
  });
  const resolver = config.database.client === 'sqlite' ? resolverFor(config) : undefined;
  const webhooks = resolver
    ? startWebhookWork(cleanupRepositories, config, { logger, metrics: webhookMetrics, resolver })
    : (thread = startDeliveryThreadWhenNeeded(cleanupRepositories, config, {
        logger,
        addMetrics: (batch) => webhookMetrics.add(batch),
        threadEnded: (cause) => webhookMetrics.threadEnded(cause),
        entry: webhookThreadEntry,
      }));
  const numbering = startEventNumbering(numberingRepositories, {
    logger,
    metrics: eventMetrics,
    onNumbered: (lastSequences) => {
      feed.numbered(lastSequences);
      webhooks.plan(lastSequences.keys());
    },
    onLeaseTaken: () => webhooks.catchUp(),
  });
  return {
    feed,
    numbering,
    resolver: resolver ?? thread!.resolver,
    async stop() {
      // Long polls answer now, with what they have, so their connections can close.
      feed.stop();
      await numbering.stop();
      await webhooks.stop();
    },
  };
}

/** The requests' pool, and the background work's: small pools of their own, except on SQLite. */
function openPools(config: Config, knexLog: Knex.Logger) {
  const statementTimeoutMs = config.statementTimeoutSeconds * 1000;
  const requests = createKnex(config.database, knexLog, statementTimeoutMs);
  // However much the background jobs have to do, requests keep every connection of theirs,
  // and numbering never queues behind webhook work. Not on SQLite: there each pool is one
  // connection to the file, and better-sqlite3 waits for another connection's write lock
  // synchronously, blocking the event loop that connection's transaction needs to finish; one
  // shared connection takes turns instead.
  const poolFor = (size: number) =>
    config.database.client === 'sqlite'
      ? requests
      : createKnex(config.database, knexLog, statementTimeoutMs, size);
  const pools = {
    requests,
    numbering: poolFor(backgroundPoolSizes.numbering),
    cleanup: poolFor(backgroundPoolSizes.cleanup),
  };
  return {
    ...pools,
    async close() {
      for (const pool of new Set(Object.values(pools))) await pool.destroy();
    },
  };
}

/** Migrations may run long statements (an index over a large table): on a pool of their own, without the bound every request's statements have. */
async function migrate(config: Config, knexLog: Knex.Logger, logger: Logger): Promise<void> {
  const migrator = createKnex(config.database, knexLog);
  try {
    await migrateToLatest(migrator, {
      onWait: () => logger.info('another instance is migrating the database; waiting for it'),
    });
  } finally {
    await migrator.destroy();
  }
}

function listen(server: Server, { port, host }: Config): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
}

/** Stops taking connections and waits for those open to finish, cutting what still runs after `graceMs`. */
async function closeWithin(server: Server, graceMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Keep-alive connections whose last answer went out before the signal sit idle: close them as
  // they fall idle, not only those idle at the moment of close().
  const idleSweep = setInterval(() => server.closeIdleConnections(), 50);
  const deadline = setTimeout(() => server.closeAllConnections(), graceMs);
  await closed;
  clearInterval(idleSweep);
  clearTimeout(deadline);
}

export async function startService(
  config: Config,
  options: {
    logDestination?: DestinationStream;
    /** The delivery thread's code, when not the service's own: tests give threads that die. */
    webhookThreadEntry?: string;
    /** The API versions and their documents, when not the service's own: tests give versions of their own. */
    apiVersions?: VersionSet;
  } = {},
): Promise<RunningService> {
  const logger = createLogger(config.logLevel, options.logDestination);
  if (config.webhookAllowPrivateTargets) {
    logger.warn(
      'WEBHOOK_ALLOW_PRIVATE_TARGETS=true: the SSRF guard is off, webhook endpoints may use http and reach loopback, private and other internal addresses; for development and tests only',
    );
  }
  const knexLog = knexLogFor(logger);
  await migrate(config, knexLog, logger);
  const pools = openPools(config, knexLog);
  const knex = pools.requests;
  let counting: CountingStores | undefined;
  let background: BackgroundWork | undefined;
  let knownKeys: KnownKeys | undefined;
  try {
    const document = loadDocument();
    counting = createCountingStores({
      redisUrl: config.redisUrl,
      redisTimeoutMs: config.redisTimeoutMs,
      logger,
    });
    const authFailures = authFailureBudget({
      perMinute: config.authFailuresPerMinute,
      stores: counting,
    });
    const keyRateLimit = perKeyRateLimit({
      perMinute: config.rateLimitPerMinute,
      stores: counting,
      logger,
    });
    const repositories = createRepositories(knex);
    const unitOfWork = createUnitOfWork(repositories, {
      onCommitted: () => background?.numbering.poke(),
    });
    // Only the failure budget needs to tell real keys from made-up ones before looking them up.
    if (authFailures) knownKeys = await startKnownKeys(repositories.apiKeys, { logger });
    // One registry for the requests' metrics and the background work's.
    const registry = new Registry();
    const backgroundRepositories = {
      numberingRepositories: createRepositories(pools.numbering),
      cleanupRepositories: createRepositories(pools.cleanup),
    };
    background = startBackgroundWork(backgroundRepositories, config, {
      logger,
      registry,
      webhookThreadEntry: options.webhookThreadEntry,
    });
    const api = await createOperationRouter({
      definition: document.definition,
      repositories,
      unitOfWork,
      feed: background.feed,
      webhookTargets: targetGuard({
        allowPrivateTargets: config.webhookAllowPrivateTargets,
        resolver: background.resolver,
        lookupTimeoutMs: config.webhookDnsTimeoutMs,
      }),
      webhookFences: {
        endpointsPerTenant: config.webhookEndpointsPerTenant,
        countRedelivery: redeliveryLimit({ stores: counting }),
        countEndpointChange: endpointChangeLimit({ stores: counting }),
      },
      bulkFences: bulkFence(repositories.bulkSlots, config.bulkChangesPerInstance),
      authFailures,
      knownKeys,
      versions: options.apiVersions,
    });
    const shutdown = shutdownSignal();
    const metrics = createMetrics(knex, registry);
    const app = createApp({
      document,
      api,
      knex,
      logger,
      metrics,
      corsOrigins: config.corsOrigins,
      deprecatedVersions: config.apiVersionsDeprecated,
      trustProxy: config.trustProxy,
      slowReaderTimeoutSeconds: config.slowReaderTimeoutSeconds,
      maxConnectionsPerAddress: config.maxConnectionsPerAddress,
      shutdown,
      keyRateLimit,
    });
    const server = httpServerFor(app, config);
    answerUnparsableRequests(server, logger, metrics);
    await listen(server, config);
    api
      .compileValidators()
      .catch((error: unknown) =>
        logger.error({ err: error }, 'a request validator does not compile'),
      );
    const cleanup = startCleanup(backgroundRepositories.cleanupRepositories, {
      intervalMs: config.cleanupIntervalSeconds * 1000,
      eventRetentionDays: config.eventRetentionDays,
      logger,
    });
    const { port } = server.address() as AddressInfo;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    const work = background;
    return {
      url: `http://${host}:${port}`,
      knex,
      logger,
      /**
       * Stops taking connections, lets the requests in flight finish (each answered with
       * Connection: close), then closes the pool. Requests still running after the grace
       * period have their connections cut.
       */
      async stop() {
        shutdown.begin();
        // Long polls answer now, with what they have, so their connections can close.
        work.feed.stop();
        await closeWithin(server, config.shutdownGraceSeconds * 1000);
        await cleanup.stop();
        await work.stop();
        await knownKeys?.stop();
        await counting?.close();
        await pools.close();
      },
    };
  } catch (error) {
    await background?.stop();
    await knownKeys?.stop();
    await counting?.close();
    await pools.close();
    throw error;
  }
}
