/**
 * Every statement on a MySQL connection is bounded in time, so a database that stops answering
 * (frozen, or cut off without the connection closing) costs a request seconds, not forever.
 */

/** The part of a mysql2 connection this needs. */
interface Mysql2Connection {
  query(...args: unknown[]): unknown;
  stream: { destroy(error?: Error): void };
}

/**
 * Wraps the connection's `query` so that a statement unanswered after `ms` destroys the
 * connection: mysql2 then fails the statement with a fatal error (which the repositories report
 * as the database being unavailable, a 503) and the pool drops the connection. Only the client
 * can end the wait on a server that does not run at all; a server that does run stops the
 * statement itself too (max_statement_time, set by the caller).
 */
export function boundStatements(connection: Mysql2Connection, ms: number): void {
  const query = connection.query.bind(connection);
  connection.query = (...args: unknown[]) => {
    const callback = args.at(-1);
    if (typeof callback !== 'function') return query(...args);
    const timer = setTimeout(() => {
      connection.stream.destroy(
        Object.assign(new Error(`The database did not answer a statement within ${ms} ms.`), {
          code: 'ETIMEDOUT',
        }),
      );
    }, ms);
    return query(...args.slice(0, -1), (...results: unknown[]) => {
      clearTimeout(timer);
      callback(...results);
    });
  };
}
