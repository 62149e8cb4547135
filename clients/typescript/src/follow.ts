/**
 * Following the event feed: every event of the tenant once, in `sequence` order, each with the
 * cursor to store once it is handled, so a consumer that stops and resumes from its stored cursor
 * misses nothing and repeats nothing. Long polls while nothing is new; waits and goes on when the
 * service is busy or unreachable; throws CursorExpiredError when the cursor is no longer served
 * (resynchronise from the resources, then follow from the error's `latestCursor`).
 */
import type { EventType, TypedEvent } from './types';
import type { ApiVersion, DefaultApiVersion } from './versions';
import { ProblemError } from './problems';

/** How to follow the feed of a client in version `V` (default `2026-11-28`). */
export interface FollowOptions<V extends ApiVersion = DefaultApiVersion> {
  /** A stored cursor, `'latest'` (only what happens from now on) or `'oldest'` (the default: every kept event). */
  from?: string;
  /** Only events of these types (the cursor still moves past the others). */
  types?: EventType<V>[];
  /** Only events of this project. */
  projectId?: string;
  /** Stops following: the iteration ends. */
  signal?: AbortSignal;
  /** How long one request waits for a new event (1–30 s; default 30). */
  waitSeconds?: number;
  /** Events per page (1–200; default 200). */
  limit?: number;
  /**
   * Called once, before the first event, with the cursor where this follower starts (for
   * `'latest'`, the feed's head when it started); awaited. Store it first: a follower stopped
   * before its first event then resumes from there, and misses nothing that happened meanwhile.
   */
  onStart?: (cursor: string) => void | Promise<void>;
}

/** An event (as version `V`, default `2026-11-28`, renders it), and the cursor that resumes the feed right after it. */
export type FollowedEvent<V extends ApiVersion = DefaultApiVersion> = TypedEvent<V> & {
  cursor: string;
};

/** The feed no longer serves the cursor: read the resources again, then follow from `latestCursor`. */
export class CursorExpiredError extends Error {
  override readonly name = 'CursorExpiredError';
  constructor(
    /** The feed's head when the service answered: follow from here after resynchronising. */
    readonly latestCursor: string | undefined,
    readonly problem: ProblemError,
  ) {
    super(problem.detail);
  }
}

/** The cursor that reads on after `sequence` (the service's cursor format, which this kit ships with). */
export function cursorAfter(sequence: number): string {
  // base64url is base64 without padding here: `{"after":` fills three whole groups, and digits and
  // `}` never encode to the two characters that differ ('+' and '/').
  return btoa(`{"after":${sequence}}`).replace(/=+$/, '');
}

/** Reads one page of the feed, throwing a ProblemError for an error answer (retries are below it). */
export type FeedPageReader<V extends ApiVersion = DefaultApiVersion> = (
  query: {
    cursor?: string;
    from?: 'latest';
    limit: number;
    wait: number;
    type?: EventType<V>[];
    project_id?: string;
  },
  signal?: AbortSignal,
) => Promise<{ data: TypedEvent<V>[]; next_cursor: string; has_more: boolean }>;

const pauseAfterFailureMs = (failures: number) =>
  Math.min(30_000, 500 * 2 ** Math.min(failures, 6)) * (0.5 + Math.random() / 2);

export async function* follow<V extends ApiVersion>(
  readPage: FeedPageReader<V>,
  options: FollowOptions<V> = {},
): AsyncGenerator<FollowedEvent<V>> {
  const { signal, types, projectId } = options;
  const wait = options.waitSeconds ?? 30;
  const limit = options.limit ?? 200;
  const filters = {
    ...(types ? { type: types } : {}),
    ...(projectId ? { project_id: projectId } : {}),
  };
  let cursor: string | undefined =
    options.from === 'oldest' || options.from === 'latest' ? undefined : options.from;
  let latestFirst = options.from === 'latest';
  let lastYielded = 0;
  let hasMore = true;
  let failures = 0;
  let started = false;
  while (!signal?.aborted) {
    let page: Awaited<ReturnType<FeedPageReader<V>>>;
    try {
      page = latestFirst
        ? await readPage({ from: 'latest', limit, wait: 0, ...filters }, signal)
        : await readPage(
            { ...(cursor ? { cursor } : {}), limit, wait: hasMore ? 0 : wait, ...filters },
            signal,
          );
    } catch (error) {
      if (signal?.aborted) return;
      if (error instanceof ProblemError && error.status === 410)
        throw new CursorExpiredError(error.problem.latest_cursor as string | undefined, error);
      // What retries could not get past (the service busy or unreachable for longer) is waited out;
      // anything else (a key refused, a request the service calls invalid) ends the following.
      if (error instanceof ProblemError && error.status !== 429 && error.status !== 503)
        throw error;
      await new Promise((resolve) => setTimeout(resolve, pauseAfterFailureMs(failures++)));
      continue;
    }
    failures = 0;
    latestFirst = false;
    if (!started) {
      started = true;
      const start =
        cursor ??
        (page.data.length > 0 ? cursorAfter(page.data[0].sequence - 1) : page.next_cursor);
      await options.onStart?.(start);
    }
    for (const event of page.data) {
      // A page read again (from an older cursor) yields nothing already yielded.
      if (event.sequence <= lastYielded) continue;
      lastYielded = event.sequence;
      // The page is this follower's own: each event takes its cursor in place rather than as a copy.
      const followed = event as FollowedEvent<V>;
      followed.cursor = cursorAfter(event.sequence);
      yield followed;
      if (signal?.aborted) return;
    }
    cursor = page.next_cursor;
    hasMore = page.has_more;
  }
}
