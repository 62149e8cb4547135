/**
 * Events' numbering and feed: numbered per tenant after they commit (one numbering writer at a
 * time, holding a lease), and read back as a feed of numbered events only. A change writes its
 * event through src/db/event-log.ts.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/api';
import { affectedRows } from '../db/raw-answers';
import { translatingErrors } from '../db/database-errors';
import {
  awaitingNumber,
  awaitingNumberSql,
  numbered,
  toEvent,
  type EventRow,
} from '../db/event-log';
import { readPage } from '../db/page-reads';
import { toDbTimestamp, type DbTimestamp } from '../db/timestamps';
import { inTransaction, type QuerySource, type Transaction } from '../db/transactions';
import { CursorExpiredError } from '../errors';
import { encodeEventCursor } from './event-cursor';

type Event = components['schemas']['Event'];
type EventType = components['schemas']['EventType'];

export interface FeedQuery {
  /** The position to read after (the last sequence a consumer has), or none: from the oldest kept. */
  after?: number;
  limit: number;
  types?: EventType[];
  projectId?: string;
}

export interface FeedPage {
  events: Event[];
  /** The position after the last event returned, or after all that were there to read. */
  position: number;
  hasMore: boolean;
}

/** An event awaiting its number, as the numbering transaction reads it. */
export interface PendingEvent {
  event_id: string;
  tenant_id: string;
  created_at: DbTimestamp;
}

export type EventsRepository = ReturnType<typeof eventsRepository>;

export function eventsRepository(knex: Knex) {
  const lastSequenceOf = async (tenantId: string) =>
    Number(
      (await knex('event_sequences').first('last_sequence').where('tenant_id', tenantId))
        ?.last_sequence ?? 0,
    );

  return translatingErrors({
    /** The position after the tenant's newest numbered event: where a consumer following from now starts. */
    latest: lastSequenceOf,

    /**
     * A page of the tenant's numbered events after a position. CursorExpiredError when events
     * after that position have been removed by retention, or when the position is past the newest
     * numbered event (events committed but not numbered yet do not count: no cursor names them).
     */
    async page(tenantId: string, query: FeedQuery): Promise<FeedPage> {
      // Read first, so every event up to it is numbered and visible to the page's own read.
      const last = await lastSequenceOf(tenantId);
      const oldestRow = await knex('events')
        .where('tenant_id', tenantId)
        .modify(numbered)
        .min({ oldest: 'sequence' })
        .first();
      const oldest = oldestRow?.oldest == null ? undefined : Number(oldestRow.oldest);
      const firstKept = oldest ?? last + 1;
      if (query.after !== undefined && query.after > last)
        throw new CursorExpiredError('ahead', encodeEventCursor(last));
      if (query.after !== undefined && query.after < firstKept - 1)
        throw new CursorExpiredError('removed', encodeEventCursor(last));
      const start = query.after ?? firstKept - 1;
      const select = (): Promise<EventRow[]> =>
        knex('events')
          .select('event_id', 'sequence', 'type', 'created_at', 'project_id', 'request_id', 'data')
          .where('tenant_id', tenantId)
          .where('sequence', '>', start)
          .where('sequence', '<=', last)
          .modify((q) => {
            if (query.types) q.whereIn('type', query.types);
            if (query.projectId) q.where('project_id', query.projectId);
          })
          .orderBy('sequence')
          .limit(query.limit + 1);
      const { rows, fitting } = await readPage(select, query.limit);
      const hasMore = rows.length > fitting;
      if (hasMore) rows.length = fitting;
      const position = hasMore ? Number(rows[rows.length - 1].sequence) : Math.max(start, last);
      return { events: rows.map(toEvent), position, hasMore };
    },

    /**
     * The tenant's numbered events after `after` up to `last` (every one of them numbered and
     * visible once `last` was read), oldest first, at most `bound` of them, whatever their type
     * or project: one read that serves every long poll of the tenant (see pageFromRows).
     */
    async rowsAfter(
      tenantId: string,
      after: number,
      last: number,
      bound: number,
    ): Promise<EventRow[]> {
      return knex('events')
        .select('event_id', 'sequence', 'type', 'created_at', 'project_id', 'request_id', 'data')
        .where('tenant_id', tenantId)
        .where('sequence', '>', after)
        .where('sequence', '<=', last)
        .orderBy('sequence')
        .limit(bound);
    },

    /**
     * The last sequence given to each of these tenants' events; a tenant with none yet has no
     * entry. Read on the pool, or in a numbering transaction.
     */
    async lastSequences(tenantIds: string[], db: QuerySource = knex): Promise<Map<string, number>> {
      const rows: Array<{ tenant_id: string; last_sequence: number }> = await db('event_sequences')
        .select('tenant_id', 'last_sequence')
        .whereIn('tenant_id', tenantIds);
      return new Map(rows.map((row) => [row.tenant_id, Number(row.last_sequence)]));
    },

    /** Whether any committed event waits for its number: one read, outside any transaction. */
    async anyAwaitingNumber(): Promise<boolean> {
      return (await knex('events').first('event_id').modify(awaitingNumber)) !== undefined;
    },

    /**
     * Runs `work` in a numbering transaction, again after a conflict, READ COMMITTED: it takes no
     * gap locks that inserts of new events would wait on. That is safe only because every write
     * the numbering makes in it is conditional (src/events/numbering-protocol.ts).
     */
    numbering<T>(work: (trx: Transaction) => Promise<T>): Promise<T> {
      return inTransaction(knex, 'event-numbering', ({ trx }) => work(trx), {
        readCommitted: true,
      });
    },

    /** Up to `batch` committed events that wait for their numbers, by event id: oldest written first. */
    async oldestAwaitingNumber(trx: Transaction, batch: number): Promise<PendingEvent[]> {
      return trx('events')
        .select('event_id', 'tenant_id', 'created_at')
        .modify(awaitingNumber)
        .orderBy('event_id')
        .limit(batch);
    },

    /** Gives each event its sequence, where it still waits for one; how many it numbered. */
    async setSequences(
      trx: Transaction,
      sequences: ReadonlyArray<readonly [eventId: string, sequence: number]>,
    ): Promise<number> {
      const updated = await trx.raw(
        `update events set sequence = case event_id ${sequences.map(() => 'when ? then ?').join(' ')} end where event_id in (${sequences.map(() => '?').join(', ')}) and ${awaitingNumberSql}`,
        [...sequences.flat(), ...sequences.map(([eventId]) => eventId)],
      );
      return affectedRows(updated);
    },

    /**
     * Moves a tenant's last sequence on from `from` (undefined: the tenant has none yet) to `to`;
     * false when it is no longer at `from`.
     */
    async moveLastSequence(
      trx: Transaction,
      tenantId: string,
      from: number | undefined,
      to: number,
    ): Promise<boolean> {
      if (from === undefined) {
        await trx('event_sequences').insert({ tenant_id: tenantId, last_sequence: to });
        return true;
      }
      const moved = await trx('event_sequences')
        .where({ tenant_id: tenantId, last_sequence: from })
        .update({ last_sequence: to });
      return moved === 1;
    },

    /** How many committed events wait for their numbers: a range of the index numbering reads them by. */
    async countAwaitingNumber(): Promise<number> {
      const row = await knex('events').modify(awaitingNumber).count({ count: '*' }).first();
      return Number(row?.count ?? 0);
    },

    /** Removes up to `batch` numbered events older than the retention; how many it removed. */
    async removeOlderThan(days: number, batch: number): Promise<number> {
      const cutoff = toDbTimestamp(new Date(Date.now() - days * 86_400_000).toISOString());
      const ids: string[] = await knex('events')
        .where('created_at', '<', cutoff)
        .modify(numbered)
        .orderBy('created_at')
        .limit(batch)
        .pluck('event_id');
      if (ids.length === 0) return 0;
      return knex('events').whereIn('event_id', ids).delete();
    },
  });
}
