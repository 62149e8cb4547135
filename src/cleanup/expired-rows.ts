/**
 * Removes in the background what the service keeps only for a while (Idempotency-Keys after 24
 * hours, events and webhook delivery attempts after the events' retention), a small batch at a time, so a large backlog never holds a lock or a connection for long.
 * Several instances may run it at once: each batch deletes only rows that are still expired.
 */
import type { Logger } from 'pino';
import type { CoreRepositories } from '../db/repositories';

/** Rows removed by one statement. */
const batchSize = 500;

/** What clean-up removes, named by shape so that it imports no feature: server.ts hands it every repository. */
export interface ExpiringRows {
  idempotency: Pick<CoreRepositories['idempotency'], 'removeExpired'>;
  events: { removeOlderThan(days: number, batch: number): Promise<number> };
  webhookDeliveries: { removeOlderThan(days: number, batch: number): Promise<number> };
}

export interface Cleanup {
  stop(): Promise<void>;
}

export function startCleanup(
  repositories: ExpiringRows,
  options: { intervalMs: number; eventRetentionDays: number; logger: Logger },
): Cleanup {
  const { intervalMs, eventRetentionDays, logger } = options;
  let stopping = false;
  let running: Promise<void> = Promise.resolve();

  const removeAll = async (what: string, removeBatch: () => Promise<number>) => {
    let removed = 0;
    for (let batch = batchSize; batch === batchSize && !stopping;) {
      batch = await removeBatch();
      removed += batch;
    }
    if (removed > 0) logger.info({ removed }, `${what} removed`);
  };
  const removeExpired = async () => {
    await removeAll('expired idempotency keys', () =>
      repositories.idempotency.removeExpired(batchSize),
    );
    await removeAll('events past their retention', () =>
      repositories.events.removeOlderThan(eventRetentionDays, batchSize),
    );
    await removeAll("webhook delivery attempts past the events' retention", () =>
      repositories.webhookDeliveries.removeOlderThan(eventRetentionDays, batchSize),
    );
  };

  const timer = setInterval(() => {
    running = running
      .then(removeExpired)
      .catch((error: unknown) =>
        logger.warn({ err: error }, 'removing expired rows failed; trying again later'),
      );
  }, intervalMs);

  return {
    async stop() {
      stopping = true;
      clearInterval(timer);
      await running;
    },
  };
}
