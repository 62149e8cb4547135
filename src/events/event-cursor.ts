/**
 * The event feed's cursor: an opaque spelling of a position in a tenant's feed (the last
 * sequence a consumer has). It lives beside the feed's read, which names the latest cursor when
 * it refuses a position, as the lists' cursors live in keyset.ts. The client kit spells it the
 * same way (`cursorAfter`), so that a consumer can resume from any event it handled.
 */
import { InvalidCursorError } from '../errors';

export function encodeEventCursor(position: number): string {
  return Buffer.from(JSON.stringify({ after: position })).toString('base64url');
}

/** The position a cursor names; InvalidCursorError for anything this feed cannot have given. */
export function decodeEventCursor(cursor: string): number {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError('cannot be decoded');
  }
  const after = (decoded as { after?: unknown } | null)?.after;
  if (typeof after !== 'number' || !Number.isSafeInteger(after) || after < 0)
    throw new InvalidCursorError('cannot be decoded');
  return after;
}
