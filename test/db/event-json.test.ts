/**
 * A webhook sends an event's JSON spliced from its row; it must be the very text the feed's
 * Event gives under JSON.stringify, whatever the event holds, or the two would disagree.
 */
import { eventJson, toEvent, type EventRow } from '../../src/db/event-log';

const row = (object: Record<string, unknown>, previous?: Record<string, unknown>): EventRow => ({
  event_id: '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
  sequence: 12345678901,
  type: 'task.updated',
  created_at: '2026-11-28 23:59:59.123',
  project_id: 'p"r\\oj',
  request_id: 'req\u2028\u0001',
  data: JSON.stringify({ object, previous }),
});

it.each([
  ['plain fields', row({ task_id: 't', title: 'Write it', status: 'pending', version: 3 })],
  ['JSON escapes', row({ title: 'say "hi"\\ \n\t\u0001 end', description: '"'.repeat(50) })],
  ['text outside ASCII', row({ title: 'é 日本語 💡', description: 'a\ud800b' })],
  ['what changed', row({ status: 'done', version: 4 }, { status: 'pending', version: 3 })],
  ['nulls and numbers', row({ description: null, ratio: -1.5e-7, big: 2 ** 53 })],
])('splices %s into the text JSON.stringify gives the feed’s event', (_name, eventRow) => {
  const json = eventJson(eventRow);
  expect(json).toBe(JSON.stringify(toEvent(eventRow)));
  expect(JSON.parse(json)).toEqual(toEvent(eventRow));
});

it('numbers a sequence read back as text (a BIGINT, say) as a number', () => {
  const read = { ...row({ title: 't' }), sequence: '42' as unknown as number };
  expect(JSON.parse(eventJson(read)).sequence).toBe(42);
});
