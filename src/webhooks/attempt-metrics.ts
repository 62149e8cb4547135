/**
 * What the delivery worker counts, as an interface: the service's registry implements it
 * (metrics.ts), and so does the batch a delivery thread sends back; no prom-client here, which the
 * thread then never loads.
 */
import type { AttemptResult } from './http-client';

export type DeliveryOutcomeLabel = 'delivered' | 'failed' | 'timed_out' | 'refused';
export type DisabledReason = 'gone' | 'failing';

export interface WebhookMetrics {
  /** Counts an attempt that got an outcome (not one called off because the service stops). */
  attempted(outcome: DeliveryOutcomeLabel): void;
  /** An attempt took a slot (+1) or gave it back (-1). */
  inFlight(change: 1 | -1): void;
  /** A 2xx came for an event committed at `eventCreatedAt` (ISO). */
  delivered(eventCreatedAt: string): void;
  disabled(reason: DisabledReason): void;
}

/** What a delivery thread counted since it last sent it, for the service's registry to add up. */
export interface MetricsBatch {
  attempted: Partial<Record<DeliveryOutcomeLabel, number>>;
  inFlight: number;
  delaysSeconds: number[];
  disabled: Partial<Record<DisabledReason, number>>;
  /** The thread's heap when the batch was sent, and the most it may hold. */
  heap?: { usedBytes: number; limitBytes: number };
}

/** The worker's metrics in a thread of its own: counted there, taken in batches. */
export function batchingMetrics(): { metrics: WebhookMetrics; take(): MetricsBatch | undefined } {
  let batch: MetricsBatch | undefined;
  const open = () => (batch ??= { attempted: {}, inFlight: 0, delaysSeconds: [], disabled: {} });
  return {
    metrics: {
      attempted: (outcome) =>
        void (open().attempted[outcome] = (batch!.attempted[outcome] ?? 0) + 1),
      inFlight: (change) => void (open().inFlight += change),
      delivered: (eventCreatedAt) => void open().delaysSeconds.push(delaySeconds(eventCreatedAt)),
      disabled: (reason) => void (open().disabled[reason] = (batch!.disabled[reason] ?? 0) + 1),
    },
    take() {
      const taken = batch;
      batch = undefined;
      return taken;
    },
  };
}

export const delaySeconds = (eventCreatedAt: string) =>
  Math.max(0, Date.now() - Date.parse(eventCreatedAt)) / 1000;

/** What the metrics call an attempt's result; undefined for one called off. */
export function outcomeLabel(result: AttemptResult): DeliveryOutcomeLabel | undefined {
  if (result.abandoned) return undefined;
  if (result.status !== undefined && result.status >= 200 && result.status < 300)
    return 'delivered';
  if (result.error === 'timeout') return 'timed_out';
  if (result.error?.startsWith('refused:')) return 'refused';
  return 'failed';
}
