/**
 * The service's log: pino, one JSON line per record, never a key, a secret, a body or a
 * statement's values. Shared by the request path and the background work, in either thread.
 */
import type { Knex } from 'knex';
import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config';
import { errorForLog } from './db/error-for-log';

/**
 * Standard output is written in batches, of 4 KiB or what 100 ms gathered, whichever comes first
 * (and at exit): a line at a time, as pino writes by default, each line is a write of its own
 * through libuv's thread pool, a cost every request pays under load. A process killed outright
 * loses the lines of its last 100 ms. An error is shown as errorForLog says, without the values
 * of a statement that failed.
 */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: isoTimeByMillisecond(),
      serializers: { err: errorForLog },
    },
    destination ?? pino.destination({ dest: 1, minLength: 4096, periodicFlush: 100 }),
  );
}

/**
 * pino's isoTime, made once per millisecond rather than once per line: under load lines come
 * several a millisecond, and a Date and its ISO text per line show in the CPU profile.
 */
function isoTimeByMillisecond(): () => string {
  let millisecond = 0;
  let field = '';
  return () => {
    const now = Date.now();
    if (now !== millisecond) {
      millisecond = now;
      field = `,"time":"${new Date(now).toISOString()}"`;
    }
    return field;
  };
}

const firstLine = (message: unknown) =>
  typeof message === 'string' ? message.split('\n')[0] : message;

/** knex's warnings and errors, in the service's log. */
export function knexLogFor(logger: Logger): Knex.Logger {
  return {
    // knex puts an error's stack into its message: the first line says what happened.
    warn: (message) => logger.warn({ knex: firstLine(message) }),
    error: (message) => logger.error({ knex: firstLine(message) }),
    deprecate: (method, alternative) =>
      logger.warn({ knex: `${method} is deprecated; use ${alternative}` }),
    debug: () => {},
  };
}
