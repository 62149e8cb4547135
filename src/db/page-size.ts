/**
 * Pages stop growing at about 1 MiB of JSON: a page of the longest items (200 tasks of 10,000
 * characters) would otherwise be 8 MB, built whole in memory for each reader. A page so cut holds
 * fewer items than asked for, and its cursor goes on from its last item.
 */

export const maxPageBytes = 1024 * 1024;

/** The most bytes a row's JSON can take: each UTF-16 unit of its text as `\uXXXX` at worst, and room for the rest. */
function mostBytes(row: object): number {
  let units = 256;
  for (const value of Object.values(row)) if (typeof value === 'string') units += value.length * 6;
  return units;
}

/**
 * How many of the rows fit in a page: all of them unless their JSON may pass the limit; then
 * as many as do, and always the first, so a walk moves on.
 */
export function rowsWithinPageSize(rows: object[]): number {
  if (rows.reduce((sum, row) => sum + mostBytes(row), 0) <= maxPageBytes) return rows.length;
  let bytes = 0;
  for (const [i, row] of rows.entries()) {
    bytes += Buffer.byteLength(JSON.stringify(row));
    if (bytes > maxPageBytes) return Math.max(i, 1);
  }
  return rows.length;
}
