/**
 * The delivery thread (delivery-thread.ts), started only once some endpoint is enabled: an
 * instance whose tenants have none keeps the thread's memory. Until then planning runs here, on
 * the main thread's background pool, so that each tenant's mark moves past the events no endpoint
 * wanted and an endpoint registered later is sent only what comes after it. Once the thread runs,
 * it plans, and looks for what planning here left unfinished (planning is safe to run twice: its
 * marks move by conditional writes).
 */
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { MetricsBatch } from './attempt-metrics';
import { startDeliveryPlanning } from './delivery-planning';
import { startDeliveryThread, type DeliveryThread } from './delivery-thread';
import type { WebhookRepositories } from './repositories';

/** How often an instance without the thread looks for an enabled endpoint (registered through another instance). */
const lookEveryMs = 1000;

export function startDeliveryThreadWhenNeeded(
  repositories: WebhookRepositories,
  config: Config,
  options: { logger: Logger; addMetrics: (batch: MetricsBatch) => void; entry?: string },
): DeliveryThread {
  const { logger } = options;
  let thread: DeliveryThread | undefined;
  let stopping = false;
  // Attempts planned here are for an enabled endpoint: the thread is needed now.
  const planning = startDeliveryPlanning(repositories, { logger, onPlanned: () => start() });
  let planningStopped: Promise<void> | undefined;
  const stopPlanning = () => (planningStopped ??= planning.stop());

  const look = setInterval(() => {
    repositories.webhookEndpoints.anyEnabled().then(
      (any) => any && start(),
      (error: unknown) =>
        logger.warn(
          { err: error },
          'looking for enabled webhook endpoints failed; trying again shortly',
        ),
    );
  }, lookEveryMs);

  function start(): DeliveryThread | undefined {
    if (thread || stopping) return thread;
    clearInterval(look);
    logger.info('a webhook endpoint is enabled: starting the webhook delivery thread');
    const started = (thread = startDeliveryThread(config, options));
    void stopPlanning().then(() => started.catchUp());
    return started;
  }

  return {
    plan: (tenantIds) => (thread ?? planning).plan(tenantIds),
    catchUp: () => (thread ?? planning).catchUp(),
    flushMetrics: async (timeoutMs) => thread?.flushMetrics(timeoutMs),
    resolver: {
      // Registration looks its host up: an endpoint is about to be enabled.
      resolve: (hostname, tenant, signal) => {
        const running = start();
        if (running) return running.resolver.resolve(hostname, tenant, signal);
        return Promise.reject(new Error('the webhook delivery thread is not running'));
      },
    },
    async stop() {
      stopping = true;
      clearInterval(look);
      await stopPlanning();
      await thread?.stop();
    },
  };
}
