/**
 * knex hands mysql2 each statement as an options object ({ sql } and nothing else, for every
 * statement of the service), which mysql2 copies into an object of a new shape per statement by
 * spreading it; each later read of that copy then misses its inline cache (12 misses of the 27
 * left per getTask). Given the SQL text instead, mysql2 builds its object in one shape.
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
