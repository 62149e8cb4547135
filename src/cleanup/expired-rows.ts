/**
 * Removes in the background what the service keeps only for a while (Idempotency-Keys after 24
 * hours), a small batch at a time, so a large backlog never holds a lock or a connection for long.
 * Several instances may run it at once: each batch deletes only rows that are still expired.
 */
import type { Logger } from 'pino';
import type { Repositories } from '../db/repositories';

/** Rows removed by one statement. */
const batchSize = 500;

export interface Cleanup {
  stop(): Promise<void>;
}

export function startCleanup(repositories: Repositories, options: { intervalMs: number; logger: Logger }): Cleanup {
  const { intervalMs, logger } = options;
  let stopping = false;
  let running: Promise<void> = Promise.resolve();

  const removeExpired = async () => {
    let removed = 0;
    for (let batch = batchSize; batch === batchSize && !stopping; ) {
      batch = await repositories.idempotency.removeExpired(batchSize);
      removed += batch;
    }
    if (removed > 0) logger.info({ removed }, 'expired idempotency keys removed');
  };

  const timer = setInterval(() => {
    running = running.then(removeExpired).catch((error: unknown) => logger.warn({ err: error }, 'removing expired rows failed; trying again later'));
  }, intervalMs);

  return {
    async stop() {
      stopping = true;
      clearInterval(timer);
      await running;
    },
  };
}
