/**
 * A subscription reads a stored task event's task and its `previous` apart, cutting the stored
 * JSON at its `previous` key: it must answer as the whole event parsed would, whatever the
 * task's text holds, and for data stored in another shape.
 */
import type { components } from '../../generated/api';
import { taskMatches, type TaskFilter } from '../../src/db/task-filter';
import { subscriptionOf, taskEventsFor } from '../../src/webhooks/subscriptions';

type Task = components['schemas']['Task'];
type EventType = components['schemas']['EventType'];

const hostile = [
  'plain words',
  ',"previous":{"status":"done"}',
  'ends with a backslash \\',
  '"quoted" previous}',
  'caf\u00e9 \u2028 \\",\\"previous\\":{',
];

const task = (title: string, status: Task['status'], labels: string[]): Task => ({
  task_id: '01a243bd-e0ad-7000-8000-000000000000',
  project_id: '01a243bd-e473-7505-abb5-b7a89f8e0d78',
  title,
  description: title.length % 2 === 0 ? null : `about ${title}`,
  status,
  created_at: '2026-12-05T01:07:27.021Z',
  updated_at: '2026-12-05T01:07:28.875Z',
  completed_at: null,
  priority: 'high',
  due_on: '2026-12-12',
  labels,
  assignee: 'erin@example.com',
});

const filters: Array<TaskFilter | undefined> = [
  undefined,
  { status: { in: ['done'] } },
  { not: { status: { in: ['done'] } } },
  { text: 'previous' },
  { labels: { has: 'urgent' } },
];
const fieldLists: Array<string[] | undefined> = [undefined, ['status'], ['title', 'labels']];

/** What the subscription answers, from the whole event parsed: the rule subscriptions.ts states. */
function expected(
  filter: TaskFilter | undefined,
  fields: string[] | undefined,
  type: EventType,
  data: string,
): boolean {
  const { object, previous } = JSON.parse(data) as { object: Task; previous?: Partial<Task> };
  if (fields && type === 'task.updated' && !fields.some((field) => Object.hasOwn(previous!, field)))
    return false;
  if (filter === undefined) return true;
  const after = type === 'task.deleted' ? undefined : object;
  const before =
    type === 'task.created'
      ? undefined
      : type === 'task.deleted'
        ? object
        : { ...object, ...previous };
  return [after, before].some((one) => one !== undefined && taskMatches(filter, one));
}

/** Events of every type, of tasks with hostile titles, changed in status, title and labels, or not. */
function events(): Array<{ type: EventType; data: string }> {
  const made: Array<{ type: EventType; data: string }> = [];
  for (const title of hostile)
    for (const status of ['pending', 'done'] as const)
      for (const labels of [[], ['Urgent']]) {
        const object = task(title, status, labels);
        made.push({ type: 'task.created', data: JSON.stringify({ object }) });
        made.push({ type: 'task.deleted', data: JSON.stringify({ object }) });
        for (const previous of [
          {},
          { status: status === 'done' ? 'pending' : 'done' },
          { title: hostile[(hostile.indexOf(title) + 1) % hostile.length], labels: ['urgent'] },
        ])
          made.push({ type: 'task.updated', data: JSON.stringify({ object, previous }) });
      }
  return made;
}

describe('a subscription reading a stored task event', () => {
  it('answers as the whole event parsed would, whatever the task text holds, alone or beside others', () => {
    const parse = jest.spyOn(JSON, 'parse');
    const made = [];
    for (const filter of filters)
      for (const fields of fieldLists) {
        if (filter === undefined && fields === undefined) continue;
        const subscription = subscriptionOf(
          filter === undefined ? null : JSON.stringify(filter),
          fields === undefined ? null : JSON.stringify(fields),
        )!;
        made.push({ filter, fields, subscription });
      }
    // A tenant's endpoints share one reading of each event, of the fields all of them read.
    const shared = taskEventsFor(made.map(({ subscription }) => subscription));
    let wanted = 0;
    let checked = 0;
    for (const { filter, fields, subscription } of made) {
      const alone = taskEventsFor([subscription]);
      for (const { type, data } of events()) {
        parse.mockClear();
        const answer = subscription.wants(alone(type, data)!);
        const besideOthers = subscription.wants(shared(type, data)!);
        // Read in parts, as stored: the whole event is never parsed.
        expect(parse.mock.calls.filter(([text]) => text === data)).toEqual([]);
        const want = expected(filter, fields, type, data);
        expect({ filter, fields, type, data, answer, besideOthers }).toEqual({
          filter,
          fields,
          type,
          data,
          answer: want,
          besideOthers: want,
        });
        checked++;
        if (answer) wanted++;
      }
    }
    parse.mockRestore();
    // Both answers are given often: a reader that always said yes or no would fail above.
    expect(wanted).toBeGreaterThan(checked / 5);
    expect(checked - wanted).toBeGreaterThan(checked / 5);
  });

  it('reads data stored in another shape (spaces, keys in another order) as well', () => {
    const subscription = subscriptionOf(JSON.stringify({ status: { in: ['done'] } }), null)!;
    const taskEventOf = taskEventsFor([subscription]);
    const object = task(hostile[1], 'pending', []);
    const previous = { status: 'done' };
    for (const data of [
      JSON.stringify({ object, previous }, null, 1),
      JSON.stringify({ previous, object }),
      `{"object":${JSON.stringify(object)}, "previous": ${JSON.stringify(previous)}}`,
    ]) {
      expect(subscription.wants(taskEventOf('task.updated', data)!)).toBe(true);
      expect(subscription.wants(taskEventOf('task.created', data)!)).toBe(false);
    }
  });
});
