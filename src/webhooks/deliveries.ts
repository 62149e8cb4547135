/**
 * Webhook work as the service runs it: planning (numbered events into attempts) and the delivery
 * worker, with their settings, HTTP client and lookups, in whichever thread runs them.
 */
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { WebhookRepositories } from './repositories';
import { startDeliveryPlanning, type DeliveryPlanning } from './delivery-planning';
import { startDeliveryWorker, type DeliveryWorker } from './delivery-worker';
import { createResolver, type HostResolver } from './dns-lookups';
import { createWebhookClient } from './http-client';
import type { WebhookMetrics } from './attempt-metrics';

/** What numbering tells the webhook work, and its stop. */
export type WebhookWork = DeliveryPlanning;
/** The same, and what a delivery thread tells the main thread of its work. */
export type StartedWebhookWork = WebhookWork & Pick<DeliveryWorker, 'busiestTenant'>;

/** The resolver for webhook hosts, shared by registration and deliveries. */
export const resolverFor = (config: Config): HostResolver =>
  createResolver({
    servers: config.webhookDnsServers,
    timeoutMs: config.webhookDnsTimeoutMs,
    answerLocalhost: config.webhookAllowPrivateTargets,
  });

export function startWebhookWork(
  repositories: WebhookRepositories,
  config: Config,
  {
    logger,
    metrics,
    resolver,
    holder,
  }: { logger: Logger; metrics: WebhookMetrics; resolver: HostResolver; holder?: string },
): StartedWebhookWork {
  const timeoutMs = config.webhookTimeoutSeconds * 1000;
  const sender = createWebhookClient({
    timeoutMs,
    allowPrivateTargets: config.webhookAllowPrivateTargets,
    resolver,
  });
  const deliveries = startDeliveryWorker(
    { queue: repositories.deliveryQueue, sender },
    {
      logger,
      metrics,
      timeoutMs,
      retryScheduleMs: config.webhookRetryScheduleMs,
      maxInFlight: config.webhookMaxInFlight,
      holder,
    },
  );
  const planning = startDeliveryPlanning(repositories, {
    logger,
    onPlanned: (tenantId, endpointIds) => deliveries.poke({ tenantId, endpointIds }),
    claims: deliveries,
  });
  return {
    plan: (tenantIds) => planning.plan(tenantIds),
    catchUp: () => planning.catchUp(),
    busiestTenant: () => deliveries.busiestTenant(),
    async stop() {
      // What is left unplanned is planned by the next instance to number events.
      await planning.stop();
      // Attempts in flight are called off and their claims given back, for another instance.
      await deliveries.stop();
    },
  };
}
