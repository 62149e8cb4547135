/**
 * How many rows a raw INSERT, UPDATE or DELETE touched, from either driver's answer: mysql2's
 * [ResultSetHeader, fields] or better-sqlite3's RunResult.
 */
export function affectedRows(result: unknown): number {
  const header = Array.isArray(result) ? result[0] : result;
  const { affectedRows, changes } = header as { affectedRows?: number; changes?: number };
  const count = affectedRows ?? changes;
  if (typeof count !== 'number')
    throw new Error('the driver did not say how many rows the statement changed');
  return count;
}
