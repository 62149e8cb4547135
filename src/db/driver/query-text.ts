/**
 * knex hands mysql2 each statement as an options object ({ sql } and nothing else), which mysql2
 * copies by spreading into an object of a new shape per statement, so each later read of it misses
 * its inline cache (BENCHMARKS.md counts them). Given the SQL text, mysql2 builds one shape.
 */

/** The part of a mysql2 connection this needs. */
interface Mysql2Connection {
  query(...args: unknown[]): unknown;
}

function sqlAlone(statement: unknown): unknown {
  const options = statement as { sql?: unknown } | null;
  return typeof options === 'object' &&
    options !== null &&
    typeof options.sql === 'string' &&
    Object.keys(options).length === 1
    ? options.sql
    : statement;
}

export function queriesAsText(connection: Mysql2Connection): void {
  const query = connection.query.bind(connection);
  connection.query = (statement: unknown, ...rest: unknown[]) =>
    query(sqlAlone(statement), ...rest);
}
