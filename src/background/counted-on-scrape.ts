/**
 * A gauge read from the database when /metrics is scraped: one query, never two at once, and a
 * scrape waits for it at most `timeoutMs` (it then shows the last value read). A query that fails
 * shows NaN, unknown, rather than a count that is no longer true.
 */
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';

export function gaugeCountedOnScrape(
  registry: Registry,
  options: {
    name: string;
    help: string;
    timeoutMs: number;
    logger: Logger;
    count: () => Promise<number>;
  },
): void {
  let reading: Promise<void> | undefined;
  let failing = false;
  new Gauge({
    name: options.name,
    help: options.help,
    registers: [registry],
    async collect() {
      reading ??= options
        .count()
        .then(
          (value) => {
            failing = false;
            this.set(value);
          },
          (error: unknown) => {
            // Once an outage: a scrape every few seconds would otherwise log the same failure each time.
            if (!failing)
              options.logger.warn(
                { err: error, metric: options.name },
                'counting for a metric failed; it shows NaN until a count succeeds',
              );
            failing = true;
            this.set(Number.NaN);
          },
        )
        .finally(() => (reading = undefined));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        reading,
        new Promise<void>((resolve) => (timer = setTimeout(resolve, options.timeoutMs))),
      ]);
      clearTimeout(timer);
    },
  });
}
