/**
 * Starting and stopping the service: database, migrations, router and HTTP server. Tests start
 * it on port 0 and read the port it got.
 */
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
import { createRepositories } from './db/repositories';
import { createApp, httpServerFor } from './http/app';
import { answerUnparsableRequests } from './http/client-errors';
import { createCountingStores, type CountingStores } from './http/counting-stores';
import { loadDocument } from './http/document';
import { createLogger, createMetrics } from './http/observability';
import { createOperationRouter } from './http/operation-router';
import { authFailureBudget, perKeyRateLimit, redeliveryLimit } from './http/rate-limit';
import { shutdownSignal } from './http/shutdown';
import { startDeliveryPlanning, type DeliveryPlanning } from './webhooks/delivery-planning';
import { startDeliveryWorker, type DeliveryWorker } from './webhooks/delivery-worker';
import { createWebhookClient } from './webhooks/http-client';
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

export async function startService(
  config: Config,
  options: { logDestination?: DestinationStream } = {},
): Promise<RunningService> {
  const logger = createLogger(config.logLevel, options.logDestination);
  if (config.webhookAllowPrivateTargets) {
    logger.warn(
      'WEBHOOK_ALLOW_PRIVATE_TARGETS=true: the SSRF guard is off, webhook endpoints may use http and reach loopback, private and other internal addresses; for development and tests only',
    );
  }
  const knexLog: Knex.Logger = {
    warn: (message) => logger.warn({ knex: message }),
    error: (message) => logger.error({ knex: message }),
    deprecate: (method, alternative) =>
      logger.warn({ knex: `${method} is deprecated; use ${alternative}` }),
    debug: () => {},
  };
  // Migrations may run long statements (an index over a large table): on a pool of their own,
  // without the bound every request's statements have.
  const migrator = createKnex(config.database, knexLog);
  try {
    await migrateToLatest(migrator, {
      onWait: () => logger.info('another instance is migrating the database; waiting for it'),
    });
  } finally {
    await migrator.destroy();
  }
  const knex = createKnex(config.database, knexLog, config.statementTimeoutSeconds * 1000);
  // Work beside requests has small pools of its own, so however much it has to do, requests keep
  // every connection of theirs, and numbering never queues behind webhook work. Not on SQLite:
  // there each pool is one connection to the file, and better-sqlite3 waits for another
  // connection's write lock synchronously, blocking the event loop that connection's transaction
  // needs to finish; one shared connection takes turns instead.
  const poolFor = (size: number) =>
    config.database.client === 'sqlite'
      ? knex
      : createKnex(config.database, knexLog, config.statementTimeoutSeconds * 1000, size);
  const numberingKnex = poolFor(backgroundPoolSizes.numbering);
  const webhooksKnex = poolFor(backgroundPoolSizes.webhooks);
  const closePools = async () => {
    for (const pool of new Set([knex, numberingKnex, webhooksKnex])) await pool.destroy();
  };
  let counting: CountingStores | undefined;
  let numbering: EventNumbering | undefined;
  let feed: FeedWatcher | undefined;
  let deliveries: DeliveryWorker | undefined;
  let knownKeys: KnownKeys | undefined;
  let planning: DeliveryPlanning | undefined;
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
    const countRequest = perKeyRateLimit({
      perMinute: config.rateLimitPerMinute,
      stores: counting,
      logger,
    });
    const repositories = createRepositories(knex, { onChangeCommitted: () => numbering?.poke() });
    // Only the failure budget needs to tell real keys from made-up ones before looking them up.
    if (authFailures) knownKeys = await startKnownKeys(repositories.apiKeys, { logger });
    const numberingRepositories = createRepositories(numberingKnex);
    const background = createRepositories(webhooksKnex);
    // One registry for the requests' metrics and the background work's; what the background work
    // counts in the database it counts on its own pools, never the requests'.
    const registry = new Registry();
    const eventMetrics = createEventMetrics(registry, numberingRepositories, {
      logger,
      scrapeTimeoutMs: scrapeCountTimeoutMs,
    });
    const webhookMetrics = createWebhookMetrics(registry, background, {
      logger,
      scrapeTimeoutMs: scrapeCountTimeoutMs,
    });
    feed = startFeedWatcher(numberingRepositories, {
      logger,
      metrics: eventMetrics,
      perKey: config.longPollsPerKey,
      perTenant: config.longPollsPerTenant,
    });
    const webhookTimeoutMs = config.webhookTimeoutSeconds * 1000;
    const webhookClient = createWebhookClient({
      timeoutMs: webhookTimeoutMs,
      allowPrivateTargets: config.webhookAllowPrivateTargets,
    });
    deliveries = startDeliveryWorker(
      { queue: background.deliveryQueue, sender: webhookClient },
      {
        logger,
        metrics: webhookMetrics,
        timeoutMs: webhookTimeoutMs,
        retryScheduleMs: config.webhookRetryScheduleMs,
        maxInFlight: config.webhookMaxInFlight,
      },
    );
    const worker = deliveries;
    const planner = startDeliveryPlanning(background, { logger, onPlanned: () => worker.poke() });
    planning = planner;
    const watcher = feed;
    numbering = startEventNumbering(numberingRepositories, {
      logger,
      metrics: eventMetrics,
      onNumbered: (lastSequences) => {
        watcher.numbered(lastSequences);
        planner.plan(lastSequences.keys());
      },
      onLeaseTaken: () => planner.catchUp(),
    });
    const webhookTargets = targetGuard({ allowPrivateTargets: config.webhookAllowPrivateTargets });
    const webhookFences = {
      endpointsPerTenant: config.webhookEndpointsPerTenant,
      countRedelivery: redeliveryLimit({ stores: counting }),
    };
    const api = await createOperationRouter(
      document.definition,
      repositories,
      feed,
      webhookTargets,
      webhookFences,
      authFailures,
      knownKeys,
    );
    const shutdown = shutdownSignal();
    const metrics = createMetrics(knex, registry);
    const app = createApp({
      document,
      api,
      knex,
      logger,
      metrics,
      corsOrigins: config.corsOrigins,
      trustProxy: config.trustProxy,
      slowReaderTimeoutSeconds: config.slowReaderTimeoutSeconds,
      maxConnectionsPerAddress: config.maxConnectionsPerAddress,
      shutdown,
      countRequest,
    });
    const server = httpServerFor(app, config);
    answerUnparsableRequests(server, logger, metrics);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, resolve);
    });
    api
      .compileValidators()
      .catch((error: unknown) =>
        logger.error({ err: error }, 'a request validator does not compile'),
      );
    const cleanup = startCleanup(background, {
      intervalMs: config.cleanupIntervalSeconds * 1000,
      eventRetentionDays: config.eventRetentionDays,
      logger,
    });
    const { port } = server.address() as AddressInfo;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
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
        feed?.stop();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Keep-alive connections whose last answer went out before the signal sit idle: close them
        // as they fall idle, not only those idle at the moment of close().
        const idleSweep = setInterval(() => server.closeIdleConnections(), 50);
        const deadline = setTimeout(
          () => server.closeAllConnections(),
          config.shutdownGraceSeconds * 1000,
        );
        await closed;
        clearInterval(idleSweep);
        clearTimeout(deadline);
        await cleanup.stop();
        await numbering?.stop();
        // What is left unplanned is planned by the next instance to number events.
        await planning?.stop();
        // Attempts in flight are called off and their claims given back, for another instance.
        await deliveries?.stop();
        await knownKeys?.stop();
        await counting?.close();
        await closePools();
      },
    };
  } catch (error) {
    feed?.stop();
    await numbering?.stop();
    await planning?.stop();
    await deliveries?.stop();
    await knownKeys?.stop();
    await counting?.close();
    await closePools();
    throw error;
  }
}
