/**
 * Both databases store a timestamp as 'YYYY-MM-DD hh:mm:ss.sss' in UTC (DATETIME(3) on MySQL,
 * text on SQLite); the API shows it as ISO 8601 with milliseconds and a Z.
 */

export type DbTimestamp = string;

/**
 * The last moment formatted, kept for the calls within the same millisecond: a request asks for
 * now several times (its key's expiry, its row, its event), and formatting a Date is not free.
 */
let last = { ms: NaN, formatted: '' };

export function nowForDb(): DbTimestamp {
  const ms = Date.now();
  if (ms !== last.ms) last = { ms, formatted: toDbTimestamp(new Date(ms).toISOString()) };
  return last.formatted;
}

export function toDbTimestamp(iso: string): DbTimestamp {
  return iso.slice(0, 10) + ' ' + iso.slice(11, 23);
}

export function fromDbTimestamp(value: DbTimestamp): string {
  return value.slice(0, 10) + 'T' + value.slice(11, 23) + 'Z';
}

export const dbTimestampPattern = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;

/** Whether a timestamp of that shape names a real moment (not 2026-02-30 or 99:99): it reads back the same. */
export function isRealTimestamp(value: DbTimestamp): boolean {
  const moment = new Date(fromDbTimestamp(value));
  return !Number.isNaN(moment.getTime()) && toDbTimestamp(moment.toISOString()) === value;
}
