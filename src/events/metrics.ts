/**
 * What the event numbering and the feed's long polls tell operators, on the service's Prometheus
 * registry: events waiting for a number (counted in the database at each scrape), the numbering
 * lag, whether this instance holds the numbering lease and how often it changed hands, and the
 * long polls waiting.
 */
import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { gaugeCountedOnScrape } from '../background/counted-on-scrape';
import type { EventRepositories } from './repositories';

export interface EventMetrics {
  /** Events were numbered now; `createdAtMs` are the times their changes committed (epoch milliseconds). */
  numbered(createdAtMs: number[]): void;
  lease(held: boolean): void;
  /** A long poll began (+1) or ended (-1) waiting. */
  longPolls(change: 1 | -1): void;
}

export function createEventMetrics(
  registry: Registry,
  repositories: EventRepositories,
  options: { logger: Logger; scrapeTimeoutMs: number },
): EventMetrics {
  const lag = new Histogram({
    name: 'event_numbering_lag_seconds',
    help: "Time from an event's change committing to the event getting its number.",
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const held = new Gauge({
    name: 'event_numbering_lease_held',
    help: 'Whether this instance holds the event numbering lease (1) or not (0): one instance of all should.',
    registers: [registry],
  });
  const changes = new Counter({
    name: 'event_numbering_lease_changes_total',
    help: 'Times this instance gained or lost the event numbering lease (lost: another instance took it, or this one let it go stopping).',
    labelNames: ['change'],
    registers: [registry],
  });
  const waiting = new Gauge({
    name: 'events_long_polls_waiting',
    help: 'Event feed long polls (wait) held on this instance now.',
    registers: [registry],
  });
  for (const change of ['gained', 'lost']) changes.labels(change).inc(0);
  held.set(0);
  gaugeCountedOnScrape(registry, {
    timeoutMs: options.scrapeTimeoutMs,
    logger: options.logger,
    name: 'events_awaiting_number',
    help: 'Events committed and not yet numbered (all instances: read from the database).',
    count: () => repositories.events.countAwaitingNumber(),
  });
  let holding = false;
  return {
    numbered(createdAtMs) {
      const now = Date.now();
      for (const at of createdAtMs) lag.observe(Math.max(0, now - at) / 1000);
    },
    lease(now) {
      if (now === holding) return;
      holding = now;
      held.set(now ? 1 : 0);
      changes.labels(now ? 'gained' : 'lost').inc();
    },
    longPolls: (change) => waiting.inc(change),
  };
}
