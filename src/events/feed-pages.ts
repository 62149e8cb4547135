/**
 * A long poll's page made from its tenant's shared read, in memory: exactly the page the feed's
 * own read would answer at that read's last sequence (the same events, position and has_more),
 * or nothing when the shared read cannot tell what that page is.
 */
import type { components } from '../../generated/api';
import { toEvent, type EventRow } from '../db/event-log';
import type { FeedPage, FeedQuery } from './events-repository';
import { rowsWithinPageSize } from '../db/page-size';

type Event = components['schemas']['Event'];

/** One read of a tenant's events after `from` up to `last`, oldest first; `complete` unless it stopped at its bound first. */
export interface SharedRead {
  rows: EventRow[];
  last: number;
  complete: boolean;
  /** Each row parsed once, however many polls answer with it. */
  parsed: Map<EventRow, Event>;
}

export function sharedRead(rows: EventRow[], last: number, bound: number): SharedRead {
  const complete = rows.length < bound || Number(rows[rows.length - 1].sequence) === last;
  return { rows, last, complete, parsed: new Map() };
}

export function pageFromRows(
  read: SharedRead,
  query: FeedQuery & { after: number },
): FeedPage | undefined {
  const { after } = query;
  const start = read.rows.findIndex((row) => Number(row.sequence) > after);
  // Sequences have no gaps: a missing next one was removed by retention, which only the feed's own read answers rightly (410).
  if (after < read.last && (start === -1 || Number(read.rows[start].sequence) !== after + 1))
    return undefined;
  const matching: EventRow[] = [];
  for (let i = start; i !== -1 && i < read.rows.length && matching.length <= query.limit; i++) {
    const row = read.rows[i];
    if (query.types && !query.types.includes(row.type)) continue;
    if (query.projectId && row.project_id !== query.projectId) continue;
    matching.push(row);
  }
  const fitting = rowsWithinPageSize(matching.slice(0, query.limit));
  const hasMore = matching.length > fitting;
  if (!hasMore && !read.complete) return undefined;
  const events = matching.slice(0, fitting).map((row) => {
    let event = read.parsed.get(row);
    if (event === undefined) read.parsed.set(row, (event = toEvent(row)));
    return event;
  });
  return {
    events,
    position: hasMore ? Number(matching[fitting - 1].sequence) : Math.max(after, read.last),
    hasMore,
  };
}
