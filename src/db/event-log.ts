/**
 * The `events` table as every feature shares it: a change writes its event in its own transaction
 * (so src/db's resources record events without importing src/events), and what a numbered event
 * looks like when read back. Numbering and the feed's reads live in src/events.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import type { components } from '../../generated/api';
import { translatingErrors } from './database-errors';
import { fromDbTimestamp, nowForDb, type DbTimestamp } from './timestamps';
import type { WriteContext } from './transactions';

type Event = components['schemas']['Event'];
type EventType = components['schemas']['EventType'];
type EventData = components['schemas']['EventData'];

export interface NewEvent {
  tenantId: string;
  type: EventType;
  projectId: string;
  object: EventData['object'];
  /** On an update: the fields that changed, with their old values. */
  previous?: EventData['previous'];
}

export interface EventRow {
  event_id: string;
  sequence: number;
  type: EventType;
  created_at: DbTimestamp;
  project_id: string;
  request_id: string;
  data: string;
}

/**
 * An event waits for its number with sequence 0 (numbers start at 1), not NULL: InnoDB updates a
 * value of the same size in place. Events written during a rolling upgrade by an older instance
 * wait with NULL.
 */
export const awaitingNumberSql = '(sequence = 0 or sequence is null)';
export const awaitingNumber = (q: Knex.QueryBuilder) => q.whereRaw(awaitingNumberSql);
/** Events that have their number. */
export const numbered = (q: Knex.QueryBuilder) => q.where('sequence', '>', 0);

/**
 * The fields of `before` that differ in `after`, with their values in `before`; compared by
 * value, so that a task's labels count as changed only when the set did.
 */
export function changedFields<T extends object>(before: T, after: T): Partial<T> {
  const previous: Partial<T> = {};
  for (const field of Object.keys(before) as Array<keyof T>)
    if (!isDeepStrictEqual(before[field], after[field])) previous[field] = before[field];
  return previous;
}

/** The Event exactly as the feed shows it. */
export function toEvent(row: EventRow): Event {
  return {
    event_id: row.event_id,
    sequence: Number(row.sequence),
    type: row.type,
    created_at: fromDbTimestamp(row.created_at),
    project_id: row.project_id,
    request_id: row.request_id,
    data: JSON.parse(row.data),
  };
}

/**
 * The JSON text of toEvent(row), byte for byte, with the row's data spliced in as stored (it is
 * written by JSON.stringify) rather than parsed and written again: what a webhook delivery sends.
 */
export function eventJson(row: EventRow): string {
  return (
    `{"event_id":${JSON.stringify(row.event_id)},"sequence":${Number(row.sequence)}` +
    `,"type":${JSON.stringify(row.type)},"created_at":"${fromDbTimestamp(row.created_at)}"` +
    `,"project_id":${JSON.stringify(row.project_id)},"request_id":${JSON.stringify(row.request_id)}` +
    `,"data":${row.data}}`
  );
}

export type EventLog = ReturnType<typeof eventLog>;

/** An event row's columns, in the order of the insert's bindings. */
const eventColumns = [
  'event_id',
  'tenant_id',
  'sequence',
  'type',
  'project_id',
  'request_id',
  'data',
  'created_at',
] as const;
type EventColumn = (typeof eventColumns)[number];

/**
 * Rows to one insert of many events: well within SQLite's 500 terms of a compound SELECT (how
 * knex writes a multi-row insert there) and its bound values, and a packet of some 100 KB.
 */
const eventsPerInsert = 100;

export function eventLog(knex: Knex) {
  // Built by knex once, not for every change: the same statement each time, with new values.
  // Each column's stand-in value tells which binding is whose.
  const insertEvent = knex('events')
    .insert(Object.fromEntries(eventColumns.map((column) => [column, `\u0000${column}`])))
    .toSQL();
  const bindingColumns = insertEvent.bindings.map(
    (standIn) => String(standIn).slice(1) as EventColumn,
  );

  const rowOf = (requestId: string, event: NewEvent): Record<EventColumn, Knex.Value> => ({
    event_id: uuidv7(),
    tenant_id: event.tenantId,
    sequence: 0,
    type: event.type,
    project_id: event.projectId,
    request_id: requestId,
    data: JSON.stringify({ object: event.object, previous: event.previous }),
    created_at: nowForDb(),
  });

  return translatingErrors({
    /** Writes the event of a change in the change's own transaction; it has no number yet. */
    async record({ trx, requestId }: WriteContext, event: NewEvent): Promise<void> {
      const row = rowOf(requestId, event);
      // Nothing waits on it (the await matters only with LIBRARY_SHIMS=off): it goes to the database with the change's next statement or its COMMIT.
      await trx.later({
        sql: insertEvent.sql,
        bindings: bindingColumns.map((column) => row[column]),
      });
    },

    /**
     * Writes the events of many changes made by one request (a bulk change), in their order,
     * a batch of rows to a statement rather than a statement each.
     */
    async recordMany({ trx, requestId }: WriteContext, events: readonly NewEvent[]): Promise<void> {
      for (let start = 0; start < events.length; start += eventsPerInsert) {
        const rows = events
          .slice(start, start + eventsPerInsert)
          .map((event) => rowOf(requestId, event));
        await trx.later(knex('events').insert(rows).toSQL());
      }
    },
  });
}
