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
