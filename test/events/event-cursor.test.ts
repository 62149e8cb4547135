/**
 * The feed's cursor spells a position and reads back as that position; anything else a client
 * sends as a cursor is refused as one that cannot be decoded (400 invalid-cursor), never read as
 * some other position.
 */
import { decodeEventCursor, encodeEventCursor } from '../../src/events/event-cursor';
import { InvalidCursorError } from '../../src/errors';

const spelled = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

it.each([0, 1, 9, 10, 499, 500, 123_456_789, Number.MAX_SAFE_INTEGER])(
  'reads the cursor of position %d back as that position',
  (position) => {
    const cursor = encodeEventCursor(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeEventCursor(cursor)).toBe(position);
  },
);

it.each([
  ['not base64url', '%%%'],
  ['empty', ''],
  ['not JSON', Buffer.from('{after:1}').toString('base64url')],
  ['a negative position', 'eyJhZnRlciI6LTF9'],
  ['a fractional position', spelled({ after: 1.5 })],
  ['a position past the safe integers', spelled({ after: 2 ** 53 })],
  ['a position as text', spelled({ after: '7' })],
  ['no position', spelled({})],
  ['null', spelled(null)],
  ['an array', spelled([7])],
  ["a list's cursor", spelled({ s: 'created_at', at: '2024-01-01 00:00:00.000', id: 'x' })],
])('refuses %s as a cursor that cannot be decoded', (_name, cursor) => {
  const decoding = () => decodeEventCursor(cursor);
  expect(decoding).toThrow(InvalidCursorError);
  expect(decoding).toThrow('The cursor cannot be decoded; start again without one.');
});
