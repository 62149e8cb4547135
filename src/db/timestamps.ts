/**
 * Both databases store a timestamp as 'YYYY-MM-DD hh:mm:ss.sss' in UTC (DATETIME(3) on MySQL,
 * text on SQLite); the API shows it as ISO 8601 with milliseconds and a Z.
 */

export type DbTimestamp = string;

export function nowForDb(): DbTimestamp {
  return toDbTimestamp(new Date().toISOString());
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
