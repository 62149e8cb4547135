/**
 * What the webhook deliveries tell operators, on the service's Prometheus registry: attempts by
 * outcome, attempts in flight, attempts due and overdue (counted in the database at each scrape),
 * the delay from an event to its delivery's 2xx, and endpoints disabled by reason.
 */
import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { gaugeCountedOnScrape } from '../background/counted-on-scrape';
import { delaySeconds, type MetricsBatch, type WebhookMetrics } from './attempt-metrics';
import type { WebhookRepositories } from './repositories';
import { threadEndCauses, type ThreadEndCause } from './thread-ends';

/** An attempt due for longer than this is overdue: a claimed attempt is made well within it (its wait for a slot and its timeout included). */
export const overdueAfterMs = 60_000;

/**
 * The metrics on the service's registry. `beforeScrape` is awaited before a scrape reads them:
 * a delivery thread sends what it counted since its last batch.
 */
export function createWebhookMetrics(
  registry: Registry,
  repositories: WebhookRepositories,
  options: { logger: Logger; scrapeTimeoutMs: number; beforeScrape?: () => Promise<void> },
): WebhookMetrics & {
  add(batch: MetricsBatch): void;
  threadEnded(cause: ThreadEndCause): void;
} {
  // Each of the four metrics collects on a scrape: they share one flush of the thread's counts.
  const { beforeScrape } = options;
  let flushing: Promise<void> | undefined;
  const collect =
    beforeScrape && (() => (flushing ??= beforeScrape().finally(() => (flushing = undefined))));
  const deliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook delivery attempts made, by outcome: delivered (2xx), failed (another status, or no answer), timed_out, refused (the SSRF guard refused the address).',
    labelNames: ['outcome'],
    registers: [registry],
    collect,
  });
  const inFlight = new Gauge({
    name: 'webhook_attempts_in_flight',
    help: 'Webhook delivery attempts holding a slot on this instance now.',
    registers: [registry],
    collect,
  });
  const delay = new Histogram({
    name: 'webhook_delivery_delay_seconds',
    help: "Time from an event's change committing to its delivery's 2xx, retries included.",
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 7200, 21600, 86400],
    registers: [registry],
    collect,
  });
  const disabled = new Counter({
    name: 'webhook_endpoints_disabled_total',
    help: 'Webhook endpoints disabled by the deliveries, by reason: gone (the receiver answered 410), failing (every attempt failed for 5 days).',
    labelNames: ['reason'],
    registers: [registry],
    collect,
  });
  const heapUsed = new Gauge({
    name: 'webhook_thread_heap_used_bytes',
    help: "The webhook delivery thread's JavaScript heap in use, as the thread last said (0 before it starts).",
    registers: [registry],
    collect,
  });
  const heapLimit = new Gauge({
    name: 'webhook_thread_heap_limit_bytes',
    help: 'The most heap the webhook delivery thread may hold: past it the thread ends with ERR_WORKER_OUT_OF_MEMORY and is started again.',
    registers: [registry],
    collect,
  });
  const threadEnds = new Counter({
    name: 'webhook_thread_restarts_total',
    help: 'Times the webhook delivery thread ended unasked and was started again, by cause: out_of_memory, error (an uncaught error), exit (it stopped on its own).',
    labelNames: ['cause'],
    registers: [registry],
  });
  // Every series from the start, so that a rate over them is 0 rather than missing.
  for (const cause of threadEndCauses) threadEnds.labels(cause).inc(0);
  for (const outcome of ['delivered', 'failed', 'timed_out', 'refused'])
    deliveries.labels(outcome).inc(0);
  for (const reason of ['gone', 'failing']) disabled.labels(reason).inc(0);
  const { deliveryQueue } = repositories;
  const counted = { timeoutMs: options.scrapeTimeoutMs, logger: options.logger };
  gaugeCountedOnScrape(registry, {
    ...counted,
    name: 'webhook_attempts_due',
    help: 'Webhook delivery attempts of enabled endpoints that are due and not yet made or written back (all instances: read from the database).',
    count: () => deliveryQueue.countDue(new Date()),
  });
  gaugeCountedOnScrape(registry, {
    ...counted,
    name: 'webhook_tenants_paused',
    help: 'Tenants whose webhook deliveries are paused (after the delivery thread ended three times in a row while each held the most of its work; the log says which): their attempts wait until `npm run -s webhooks -- resume --tenant NAME`.',
    count: () => repositories.tenantPauses.count(),
  });
  gaugeCountedOnScrape(registry, {
    ...counted,
    name: 'webhook_attempts_overdue',
    help: `Webhook delivery attempts of enabled endpoints due for over ${overdueAfterMs / 1000} s and still not made (all instances: read from the database).`,
    count: () => deliveryQueue.countDue(new Date(Date.now() - overdueAfterMs)),
  });
  return {
    attempted: (outcome) => deliveries.labels(outcome).inc(),
    inFlight: (change) => inFlight.inc(change),
    delivered: (eventCreatedAt) => delay.observe(delaySeconds(eventCreatedAt)),
    disabled: (reason) => disabled.labels(reason).inc(),
    add(batch) {
      for (const [outcome, count] of Object.entries(batch.attempted))
        deliveries.labels(outcome).inc(count);
      inFlight.inc(batch.inFlight);
      for (const seconds of batch.delaysSeconds) delay.observe(seconds);
      for (const [reason, count] of Object.entries(batch.disabled))
        disabled.labels(reason).inc(count);
      if (batch.heap) {
        heapUsed.set(batch.heap.usedBytes);
        heapLimit.set(batch.heap.limitBytes);
      }
    },
    threadEnded: (cause) => threadEnds.labels(cause).inc(),
  };
}
