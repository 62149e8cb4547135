import { completedAt } from '../../src/db/task-completion';

const at = '2026-12-15 10:00:00.000';
const earlier = '2026-12-01 09:00:00.000';

it.each([
  ['pending', null, 'done', at],
  ['in_progress', null, 'cancelled', at],
  ['done', earlier, 'cancelled', earlier],
  ['cancelled', earlier, 'done', earlier],
  ['done', earlier, 'done', earlier],
  ['done', earlier, 'pending', null],
  ['cancelled', earlier, 'in_progress', null],
  ['pending', null, 'in_progress', null],
] as const)(
  'a task %s (closed at %s) moved to %s is closed at %s',
  (from, closed, to, expected) => {
    expect(completedAt({ status: from, completed_at: closed }, to, at)).toBe(expected);
  },
);

it('keeps it when the status is not changed, and closes a done task that has none now', () => {
  expect(completedAt({ status: 'done', completed_at: earlier }, undefined, at)).toBe(earlier);
  expect(completedAt({ status: 'pending', completed_at: null }, undefined, at)).toBeNull();
  expect(completedAt({ status: 'done', completed_at: null }, 'cancelled', at)).toBe(at);
});
