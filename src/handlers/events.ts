import { decodeEventCursor, encodeEventCursor } from '../events/event-cursor';
import type { FeedPage } from '../events/events-repository';
import type { CoreRepositories } from '../db/repositories';
import type { EventRepositories } from '../events/repositories';
import { InvalidParameterError, KeyNoLongerValidError } from '../errors';
import type { FeedWatcher } from '../events/feed-watcher';
import type { Defaulted, OperationHandler, OperationInput } from './operation';

type FeedQuery = Defaulted<OperationInput<'listEvents'>['query'], 'limit' | 'wait'>;

export function eventHandlers(
  { events, apiKeys }: EventRepositories & Pick<CoreRepositories, 'apiKeys'>,
  feed: FeedWatcher,
) {
  /**
   * A page of the feed; with `wait`, held until a matching event is numbered or the time is up,
   * unless the key or its tenant holds as many long polls as it may: then answered at once.
   * A poll whose client leaves gives its place back then; one that waited asks again whether its
   * key is still valid. `from=latest` starts at the tenant's newest numbered event with an empty page.
   */
  const listEvents: OperationHandler<'listEvents'> = async ({ principal, query, clientGone }) => {
    const { cursor, from, limit, type, project_id, wait } = query as FeedQuery;
    if (from !== undefined && cursor !== undefined)
      throw new InvalidParameterError(
        'query',
        'from',
        'cannot be given with cursor: from says where to start when there is no cursor',
      );
    const filter = { limit, types: type && [...new Set(type)], projectId: project_id };
    const deadline = Date.now() + wait * 1000;
    const after = cursor === undefined ? undefined : decodeEventCursor(cursor);
    const poll = wait > 0 ? feed.enter(principal) : undefined;
    try {
      let page: FeedPage =
        from === 'latest'
          ? { events: [], position: await events.latest(principal.tenantId), hasMore: false }
          : (poll?.fromKnown(after) ??
            (await events.page(principal.tenantId, { ...filter, after })));
      if (poll && page.events.length === 0 && Date.now() < deadline) {
        page = await poll.next(page, filter, deadline - Date.now(), clientGone());
        if (!clientGone().aborted && !(await apiKeys.isActive(principal.keyId)))
          throw new KeyNoLongerValidError();
      }
      return {
        status: 200,
        body: {
          data: page.events,
          next_cursor: encodeEventCursor(page.position),
          has_more: page.hasMore,
        },
      };
    } finally {
      poll?.leave();
    }
  };

  return { listEvents };
}
