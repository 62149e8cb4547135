/**
 * The delivery worker in a worker thread of its own, on a pool of its own (MySQL only; SQLite's
 * one connection stays with the main thread). Under a peak of requests an attempt's callbacks
 * then wait for the thread's event loop rather than behind every request's, so each of an
 * endpoint's slots turns over at the receiver's pace. The thread's log lines and metrics come
 * back to the service's log and registry. A thread that dies is started again at once (a second later
 * when it died at once), its restart logged and counted with its cause, and what it had claimed is given back at once (its
 * connections died with it), so other instances and its successor make those attempts without
 * waiting for the claims to run out.
 */
import { randomUUID } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import path from 'node:path';
import v8 from 'node:v8';
import { Worker } from 'node:worker_threads';
import pino, { type Logger } from 'pino';
import type { Config } from '../config';
import { projectRoot } from '../paths';
import type { WebhookWork } from './deliveries';
import { untilAborted, type HostResolver } from './dns-lookups';
import type { MetricsBatch } from './attempt-metrics';
import {
  endsBeforePause,
  endsInARow,
  restartAfterMs,
  tenantToPause,
  threadEndCause,
  type ThreadEnd,
  type ThreadEndCause,
} from './thread-ends';

/** The thread runs the compiled code: under ts-jest too, where dist/ is built before the tests (test/support/build-dist.js). */
export const threadEntry = path.join(
  projectRoot,
  'dist',
  'src',
  'webhooks',
  'delivery-thread-entry.js',
);

const notRunning = { name: 'Error', message: 'the webhook delivery thread is not running' };

/**
 * The thread's heap: as much old space and young generation as the main thread's (npm start's
 * 16 MB a half). Deliveries allocate much and keep little: an 8 MB young generation cost 4 to 17%
 * more CPU a delivery in garbage collection (BENCHMARKS.md).
 */
const resourceLimits = { maxYoungGenerationSizeMb: 48, maxOldGenerationSizeMb: 128 };

/** A lookup's failure as it crosses threads: an Error's own fields, and the code the guard reads. */
export interface LookupFailure {
  name: string;
  message: string;
  code?: string;
}

export type ToThread =
  | { type: 'plan'; tenantIds: string[] }
  | { type: 'catch-up' }
  | { type: 'flush'; id: number }
  | { type: 'resolve'; id: number; hostname: string; tenant: string }
  | { type: 'stop' };
export type FromThread =
  | { type: 'log'; text: string }
  | { type: 'metrics'; batch: MetricsBatch; busiest?: string }
  | { type: 'flushed'; id: number }
  | { type: 'resolved'; id: number; addresses?: LookupAddress[]; error?: LookupFailure }
  | { type: 'stopped' };

export interface DeliveryThread extends WebhookWork {
  /** Resolves once the thread has sent what it counted so far (or could not within `timeoutMs`). */
  flushMetrics(timeoutMs: number): Promise<void>;
  /** Registration's lookups, on the thread's resolver: one cache and one set of caps for the instance. */
  resolver: Pick<HostResolver, 'resolve'>;
}

export interface DeliveryThreadOptions {
  logger: Logger;
  addMetrics: (batch: MetricsBatch) => void;
  /** The thread's code; tests give threads that fail. */
  entry?: string;
  /** How long stop() waits for the thread to give its claims back before it is terminated. */
  stopWithinMs?: number;
  /** Counts a thread that ended unasked. */
  threadEnded?: (cause: ThreadEndCause) => void;
  /** Gives back the claims and leases of a thread that died (endpoint-leases.ts' releaseHolder); answers the attempts released. */
  releaseHolder?: (holder: string) => Promise<number>;
  /** Pauses a tenant's deliveries (tenant-pauses.ts). */
  pauseTenant?: (tenantId: string, reason: string) => Promise<void>;
}

export function startDeliveryThread(
  config: Config,
  {
    logger,
    addMetrics,
    entry = threadEntry,
    stopWithinMs = 10_000,
    threadEnded,
    releaseHolder,
    pauseTenant,
  }: DeliveryThreadOptions,
): DeliveryThread {
  // The thread's lines go to the service's own destination, as written there.
  const destination = (logger as unknown as Record<symbol, { write(text: string): void }>)[
    pino.symbols.streamSym
  ];
  const flushes = new Map<number, () => void>();
  const lookups = new Map<number, (message: Extract<FromThread, { type: 'resolved' }>) => void>();
  let nextId = 0;
  let stopping = false;
  let stopped: (() => void) | undefined;
  let thread: Worker;
  let running = false;
  /** Planning asked for while the thread was down: it looks for every unplanned event when it is back. */
  let missedPlanning = false;
  /** The thread's last ends in a row, with the tenant that held the most of its work at each. */
  let ends: ThreadEnd[] = [];

  const start = () => {
    running = true;
    const holder = randomUUID();
    const startedAt = Date.now();
    let failure: unknown;
    let busiest: string | undefined;
    // V8 reads --max-semi-space-size (npm start sets it for the requests' heap) as it makes each
    // heap, over a thread's own limits: cleared, the thread's young generation is resourceLimits'.
    v8.setFlagsFromString('--max-semi-space-size=0');
    thread = new Worker(entry, { workerData: { config, holder }, resourceLimits });
    thread.on('message', (message: FromThread) => {
      if (message.type === 'log') destination.write(message.text);
      else if (message.type === 'metrics') {
        addMetrics(message.batch);
        busiest = message.busiest;
      } else if (message.type === 'flushed') flushes.get(message.id)?.();
      else if (message.type === 'resolved') lookups.get(message.id)?.(message);
      else stopped?.();
    });
    if (missedPlanning) thread.postMessage({ type: 'catch-up' } satisfies ToThread);
    missedPlanning = false;
    thread.on('error', (error) => (failure = error));
    thread.on('exit', (exitCode) => {
      running = false;
      for (const resolve of flushes.values()) resolve();
      const gone = { name: 'Error', message: 'the webhook delivery thread stopped' };
      for (const [id, answer] of lookups) answer({ type: 'resolved', id, error: gone });
      if (stopping) return stopped?.();
      const cause = threadEndCause(failure);
      threadEnded?.(cause);
      logger.error(
        { err: failure, cause, exit_code: exitCode },
        'the webhook delivery thread stopped; starting it again',
      );
      ends = endsInARow(ends, { busiest, ranMs: Date.now() - startedAt });
      const paused = tenantToPause(ends);
      if (paused !== undefined) ends = [];
      // The pause is written before the claims go back, so that no instance claims them meanwhile.
      void (paused === undefined ? Promise.resolve() : pause(paused, cause))
        .then(() => releaseHolder?.(holder))
        .then(
          (released) =>
            logger.info(
              { released },
              "the stopped webhook delivery thread's claims were given back",
            ),
          (error: unknown) =>
            logger.warn(
              { err: error },
              "giving back the stopped webhook delivery thread's claims failed: they run out on their own",
            ),
        );
      setTimeout(() => stopping || start(), restartAfterMs(Date.now() - startedAt));
    });
  };
  /** Pauses the tenant's deliveries, saying why; settles once written (or failed, which is logged). */
  const pause = async (tenantId: string, cause: ThreadEndCause): Promise<void> => {
    const reason = `the webhook delivery thread ended ${endsBeforePause} times in a row (the last: ${cause}) while this tenant held the most of its pending work`;
    logger.error(
      { tenant_id: tenantId, reason },
      "a tenant's webhook deliveries are paused: they wait until an operator runs `npm run -s webhooks -- resume --tenant NAME`",
    );
    await pauseTenant?.(tenantId, reason).catch((error: unknown) =>
      logger.error(
        { err: error, tenant_id: tenantId },
        "pausing a tenant's webhook deliveries failed",
      ),
    );
  };
  start();
  const send = (message: ToThread) => running && thread.postMessage(message);
  const planning = (message: ToThread) => {
    if (running) send(message);
    else missedPlanning = true;
  };

  return {
    plan: (tenantIds) => planning({ type: 'plan', tenantIds: [...tenantIds] }),
    catchUp: () => planning({ type: 'catch-up' }),
    flushMetrics(timeoutMs) {
      if (!running) return Promise.resolve();
      const id = nextId++;
      return new Promise<void>((resolve) => {
        const timer = setTimeout(done, timeoutMs);
        function done() {
          clearTimeout(timer);
          flushes.delete(id);
          resolve();
        }
        flushes.set(id, done);
        send({ type: 'flush', id });
      });
    },
    resolver: {
      resolve(hostname, tenant, signal) {
        const id = nextId++;
        const answered = new Promise<LookupAddress[]>((resolve, reject) => {
          lookups.set(id, ({ addresses, error }) => {
            lookups.delete(id);
            if (addresses) return resolve(addresses);
            reject(Object.assign(new Error(error!.message), error));
          });
          if (!running) return lookups.get(id)!({ type: 'resolved', id, error: notRunning });
          send({ type: 'resolve', id, hostname, tenant });
        });
        return signal ? untilAborted(answered, signal) : answered;
      },
    },
    async stop() {
      stopping = true;
      if (!running) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, stopWithinMs);
        stopped = () => {
          clearTimeout(timer);
          resolve();
        };
        send({ type: 'stop' });
      });
      await thread.terminate();
    },
  };
}
