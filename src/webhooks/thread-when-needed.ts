/**
 * The delivery thread (delivery-thread.ts), started only once some endpoint is enabled: an
 * instance whose tenants have none keeps the thread's memory. Until then planning runs here, on
 * the main thread's background pool, so that each tenant's mark moves past the events no endpoint
 * wanted and an endpoint registered later is sent only what comes after it. Once the thread runs,
 * it plans, and looks for what planning here left unfinished. Only an instance that was asked to
 * plan looks: on another, the look would plan beside the one that numbers, each chunk twice, one
 * of the two in vain (safe, as the marks move by conditional writes, but a conflict on a cluster).
 */
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { MetricsBatch } from './attempt-metrics';
import { startDeliveryPlanning } from './delivery-planning';
import { startDeliveryThread, type DeliveryThread } from './delivery-thread';
import type { WebhookRepositories } from './repositories';
import type { ThreadEndCause } from './thread-ends';

/** How often an instance without the thread looks for an enabled endpoint (registered through another instance). */
const lookEveryMs = 1000;

export function startDeliveryThreadWhenNeeded(
  repositories: WebhookRepositories,
  config: Config,
  options: {
    logger: Logger;
    addMetrics: (batch: MetricsBatch) => void;
    threadEnded?: (cause: ThreadEndCause) => void;
    entry?: string;
  },
): DeliveryThread {
  const { logger } = options;
  let thread: DeliveryThread | undefined;
  /** The thread plans once planning here has stopped: the two never plan a tenant at once. */
  let threadPlans = false;
  /** Whether this instance was asked to plan before the thread planned. */
  let asked = false;
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
    const started = (thread = startDeliveryThread(config, {
      ...options,
      releaseHolder: (holder) => repositories.deliveryQueue.releaseHolder(holder),
      pauseTenant: (tenantId, reason) => repositories.tenantPauses.pause(tenantId, reason),
    }));
    // What is named meanwhile is left to the thread's catch-up, which finds every tenant behind.
    void stopPlanning().then(() => {
      threadPlans = true;
      if (asked) started.catchUp();
    });
    return started;
  }

  const planner = () => {
    if (threadPlans) return thread!;
    asked = true;
    return planning;
  };
  return {
    plan: (tenantIds) => planner().plan(tenantIds),
    catchUp: () => planner().catchUp(),
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
