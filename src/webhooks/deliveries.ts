/** The delivery worker as the service runs it, with its settings, its HTTP client and its lookups. */
import type { Logger } from 'pino';
import type { Config } from '../config';
import { startDeliveryWorker, type DeliveryQueue, type DeliveryWorker } from './delivery-worker';
import { createResolver, type HostResolver } from './dns-lookups';
import { createWebhookClient } from './http-client';
import type { WebhookMetrics } from './metrics';

/** The resolver for webhook hosts, shared by registration and deliveries in one thread. */
export const resolverFor = (config: Config): HostResolver =>
  createResolver({
    servers: config.webhookDnsServers,
    timeoutMs: config.webhookDnsTimeoutMs,
    answerLocalhost: config.webhookAllowPrivateTargets,
  });

export function startDeliveries(
  queue: DeliveryQueue,
  config: Config,
  {
    logger,
    metrics,
    resolver,
  }: { logger: Logger; metrics: WebhookMetrics; resolver: HostResolver },
): DeliveryWorker {
  const timeoutMs = config.webhookTimeoutSeconds * 1000;
  const sender = createWebhookClient({
    timeoutMs,
    allowPrivateTargets: config.webhookAllowPrivateTargets,
    resolver,
  });
  return startDeliveryWorker(
    { queue, sender },
    {
      logger,
      metrics,
      timeoutMs,
      retryScheduleMs: config.webhookRetryScheduleMs,
      maxInFlight: config.webhookMaxInFlight,
    },
  );
}
