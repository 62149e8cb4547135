/**
 * Pages stop growing at maxPageBytes of JSON: a page of the longest items would otherwise be many
 * times that, built whole in memory for each reader. A page so cut holds fewer items than asked
 * for, and its cursor goes on from its last item.
 */

export const maxPageBytes = 1024 * 1024;

/** A character JSON spells with an escape; a string with none is its UTF-8 bytes between quotes. */
const escaped = /["\\\u0000-\u001f]/;

function jsonStringBytes(text: string): number {
  if (escaped.test(text) || !text.isWellFormed()) return Buffer.byteLength(JSON.stringify(text));
  return Buffer.byteLength(text) + 2;
}

/**
 * The bytes of `JSON.stringify(row)`, counted without building it: the reply serialises the page
 * anyway, and serialising each row first only to measure it doubled the garbage of a page of long
 * ones and cost a good part of its CPU (BENCHMARKS.md).
 */
export function jsonBytes(row: object): number {
  let bytes = 2; // the braces
  let fields = 0;
  for (const [key, value] of Object.entries(row)) {
    if (value === undefined) continue; // JSON leaves the field out
    bytes +=
      jsonStringBytes(key) +
      1 +
      (typeof value === 'string'
        ? jsonStringBytes(value)
        : Buffer.byteLength(JSON.stringify(value)));
    fields++;
  }
  return bytes + Math.max(fields - 1, 0); // the commas
}

/**
 * The most bytes a row's JSON can take: each UTF-16 unit of its text as `\uXXXX` at worst, and
 * room for the rest. A `for…in` over a row reads its fields in place, where Object.values built an
 * array per row: a fifth of the cost on a page of 50 tasks (BENCHMARKS.md).
 */
function mostBytes(row: object): number {
  let units = 0;
  for (const key in row) {
    const value = (row as Record<string, unknown>)[key];
    if (typeof value === 'string') units += value.length;
  }
  return 256 + units * 6;
}

/** Whether the rows' JSON may pass the page's limit: a quick bound, from their text's length alone. */
export function mayPassPageSize(rows: object[]): boolean {
  return rows.reduce((sum, row) => sum + mostBytes(row), 0) > maxPageBytes;
}

/**
 * How many of the rows fit in a page: all of them unless their JSON may pass the limit; then
 * as many as do, and always the first, so a walk moves on.
 */
export function rowsWithinPageSize(rows: object[]): number {
  if (!mayPassPageSize(rows)) return rows.length;
  let bytes = 0;
  for (const [i, row] of rows.entries()) {
    bytes += jsonBytes(row);
    if (bytes > maxPageBytes) return Math.max(i, 1);
  }
  return rows.length;
}
