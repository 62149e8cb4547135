import { decodeEventCursor, encodeEventCursor } from '../db/events-repository';
import type { Repositories } from '../db/repositories';
import type { FeedWatcher } from '../events/feed-watcher';
import type { Defaulted, OperationHandler, OperationInput } from './operation';

type FeedQuery = Defaulted<OperationInput<'listEvents'>['query'], 'limit' | 'wait'>;

export function eventHandlers({ events }: Repositories, feed: FeedWatcher) {
  /** A page of the feed; with `wait`, held until a matching event is numbered or the time is up. */
  const listEvents: OperationHandler<'listEvents'> = async ({ principal, query }) => {
    const { cursor, limit, type, project_id, wait } = query as FeedQuery;
    const filter = { limit, types: type && [...new Set(type)], projectId: project_id };
    const deadline = Date.now() + wait * 1000;
    let page = await events.page(principal.tenantId, { ...filter, after: cursor === undefined ? undefined : decodeEventCursor(cursor) });
    while (page.events.length === 0 && Date.now() < deadline && (await feed.waitForEventAfter(principal.tenantId, page.position, deadline - Date.now()))) {
      page = await events.page(principal.tenantId, { ...filter, after: page.position });
    }
    return { status: 200, body: { data: page.events, next_cursor: encodeEventCursor(page.position), has_more: page.hasMore } };
  };

  return { listEvents };
}
