/**
 * What runs in the webhook thread (delivery-thread.ts starts it): planning and the delivery worker
 * on a pool of their own, its log lines and metrics sent to the main thread in batches, at most every
 * `sendEveryMs` and whenever the main thread asks before a scrape.
 */
import os from 'node:os';
import v8 from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../config';
import { backgroundPoolSizes, createKnex } from '../db/knex';
import { createWebhookRepositories } from './repositories';
import { createLogger, knexLogFor } from '../logger';
import { resolverFor, startWebhookWork } from './deliveries';
import type { FromThread, ToThread } from './delivery-thread';
import { batchingMetrics } from './attempt-metrics';

const sendEveryMs = 100;

/**
 * No stack traces in this thread: undici makes an error (a stack captured each) for every header
 * line past its limit, and a receiver answering 2,000 headers took most of the thread's CPU (the
 * hostile matrix's huge-headers cell: bystander p99 9.4 s, 0.98 s without them). Its log lines
 * keep each error's message and code.
 */
Error.stackTraceLimit = 0;

const port = parentPort!;
const { config, holder } = workerData as { config: Config; holder: string };
const send = (message: FromThread) => port.postMessage(message);

let lines: string[] = [];
const logger = createLogger(config.logLevel, { write: (line: string) => void lines.push(line) });
const metrics = batchingMetrics();

/** Sends the lines and counts gathered since the last time. */
function sendGathered(): void {
  if (lines.length > 0) send({ type: 'log', text: lines.join('') });
  lines = [];
  // The heap goes with every batch: an operator sees it near its limit before the thread dies of it.
  const { used_heap_size, heap_size_limit } = v8.getHeapStatistics();
  const heap = { usedBytes: used_heap_size, limitBytes: heap_size_limit };
  const batch = { ...(metrics.take() ?? emptyBatch), heap };
  send({ type: 'metrics', batch, busiest: work.busiestTenant()?.tenantId });
}
const emptyBatch = { attempted: {}, inFlight: 0, delaysSeconds: [], disabled: {} };
setInterval(sendGathered, sendEveryMs).unref();

/**
 * Deliveries come before requests when the machine is short of CPU: otherwise writers flat out to
 * many endpoints make work faster than the thread gets the CPU to do it. On Linux a nice value
 * belongs to a thread, and pid 0 names the calling one.
 */
function takePriority(nice: number): void {
  if (process.platform !== 'linux' || os.getPriority(0) === nice) return;
  try {
    os.setPriority(0, nice);
  } catch (error) {
    logger.info(
      { err: error, nice },
      "the webhook thread keeps the service's nice value: raising its priority needs CAP_SYS_NICE or RLIMIT_NICE",
    );
  }
}
takePriority(config.webhookThreadNice);

const knex = createKnex(
  config.database,
  knexLogFor(logger),
  config.statementTimeoutSeconds * 1000,
  backgroundPoolSizes.webhooks,
);
const resolver = resolverFor(config);
const work = startWebhookWork(createWebhookRepositories(knex), config, {
  logger,
  metrics: metrics.metrics,
  resolver,
  holder,
});

/** A lookup for the main thread (registration), answered with the addresses or the failure's fields. */
function resolveFor({ id, hostname, tenant }: Extract<ToThread, { type: 'resolve' }>): void {
  resolver.resolve(hostname, tenant).then(
    (addresses) => send({ type: 'resolved', id, addresses }),
    (error: NodeJS.ErrnoException) =>
      send({
        type: 'resolved',
        id,
        error: { name: error.name, message: error.message, code: error.code },
      }),
  );
}

port.on('message', (message: ToThread) => {
  if (message.type === 'plan') return work.plan(message.tenantIds);
  if (message.type === 'catch-up') return work.catchUp();
  if (message.type === 'resolve') return resolveFor(message);
  if (message.type === 'flush') {
    sendGathered();
    return send({ type: 'flushed', id: message.id });
  }
  void work
    .stop()
    .then(() => knex.destroy())
    .finally(() => {
      sendGathered();
      send({ type: 'stopped' });
      port.close();
    });
});
