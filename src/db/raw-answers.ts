/** What a raw statement answered, from either driver's answer: mysql2's [rows or ResultSetHeader, fields], better-sqlite3's rows or RunResult. */

/** How many rows a raw INSERT, UPDATE or DELETE touched. */
export function affectedRows(result: unknown): number {
  const header = Array.isArray(result) ? result[0] : result;
  const { affectedRows, changes } = header as { affectedRows?: number; changes?: number };
  const count = affectedRows ?? changes;
  if (typeof count !== 'number')
    throw new Error('the driver did not say how many rows the statement changed');
  return count;
}

/** The rows a raw SELECT read. */
export function selectedRows<Row>(result: unknown): Row[] {
  if (!Array.isArray(result)) throw new Error('the driver answered a read with no rows');
  return (Array.isArray(result[0]) ? result[0] : result) as Row[];
}
