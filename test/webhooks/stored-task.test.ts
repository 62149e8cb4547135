/**
 * The reader of a stored task event's task (stored-task.ts) gives what `JSON.parse` of the data
 * gives, for the fields asked, whatever the task's text holds; it turns down (undefined) only
 * labels with escapes and data in a shape this service does not write, and every writer's tasks
 * are in the order it reads.
 */
import type { components } from '../../generated/api';
import { toTask } from '../../src/db/tasks-repository';
import { taskFields, taskReaderOf } from '../../src/webhooks/stored-task';

type Task = components['schemas']['Task'];

const texts = [
  'plain words',
  'a "quoted" word',
  'ends with a backslash \\',
  'two\nlines\tand a tab',
  '","previous":{"status":"done"}',
  '],"labels":["x"]}',
  'caf\u00e9 \u2028 \ud83d\ude80',
  '',
];
const labelSets = [
  [],
  ['backend'],
  ['Launch', 'backend', 'caf\u00e9'],
  ['x]y', 'a,b'],
  ['a"b'],
  ['back\\slash', 'ok'],
];

/** A seeded sequence, so that a failure is the same every run. */
function* numbers(seed: number): Generator<number> {
  for (let state = seed; ;) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    yield state / 2 ** 31;
  }
}

function tasks(): Task[] {
  const draw = numbers(46);
  const pick = <T>(values: readonly T[]): T =>
    values[Math.floor(draw.next().value! * values.length)];
  return Array.from({ length: 300 }, (_, n) => ({
    task_id: `01a243bd-e0ad-7000-8000-${String(n).padStart(12, '0')}`,
    project_id: '01a243bd-e473-7505-abb5-b7a89f8e0d78',
    title: pick(texts),
    description: pick([null, ...texts]),
    status: pick(['pending', 'in_progress', 'done', 'cancelled'] as const),
    created_at: '2026-12-05T01:07:27.021Z',
    updated_at: '2026-12-05T01:07:28.875Z',
    completed_at: pick([null, '2026-12-05T01:07:28.875Z']),
    priority: pick(['none', 'low', 'medium', 'high', 'urgent'] as const),
    due_on: pick([null, '2026-12-12']),
    labels: pick(labelSets),
    assignee: pick([null, 'erin@example.com', 'o"neil@example.com', 'tab\tmate']),
  }));
}

/** Every field alone, all of them, the planning bench's, and subsets drawn at random. */
function fieldSets(): Array<Set<string>> {
  const draw = numbers(7);
  return [
    ...taskFields.map((field) => new Set([field])),
    new Set(taskFields),
    new Set(['status', 'priority', 'labels', 'assignee', 'created_at', 'due_on', 'updated_at']),
    new Set([
      'status',
      'priority',
      'labels',
      'assignee',
      'created_at',
      'due_on',
      'title',
      'description',
    ]),
    ...Array.from({ length: 30 }, () => new Set(taskFields.filter(() => draw.next().value! < 0.4))),
  ];
}

describe('the reader of a stored task', () => {
  it('reads every asked field as JSON.parse does, and no other', () => {
    let read = 0;
    let turnedDown = 0;
    for (const asked of fieldSets()) {
      const reader = taskReaderOf(asked);
      if (asked.size === 0) {
        expect(reader).toBeUndefined();
        continue;
      }
      for (const object of tasks()) {
        const previous = { status: 'done', labels: ['x'], title: object.title };
        for (const data of [JSON.stringify({ object }), JSON.stringify({ object, previous })]) {
          const got = reader!(data);
          const escapedLabels = JSON.stringify(object.labels).includes('\\');
          if (asked.has('labels') && escapedLabels) {
            expect({ data, got }).toEqual({ data, got: undefined });
            turnedDown++;
            continue;
          }
          const parsed = (JSON.parse(data) as { object: Task }).object;
          const want = Object.fromEntries(
            taskFields.map((field) => [field, asked.has(field) ? parsed[field] : undefined]),
          );
          expect({ data, asked: [...asked], got }).toEqual({ data, asked: [...asked], got: want });
          read++;
        }
      }
    }
    // Both happen often: a reader that turned everything down would pass the loop above.
    expect(read).toBeGreaterThan(10_000);
    expect(turnedDown).toBeGreaterThan(100);
  });

  it('turns down data in any other shape', () => {
    const reader = taskReaderOf(new Set(['status', 'labels']))!;
    const [object] = tasks();
    const { status, ...rest } = object;
    const shapes = [
      JSON.stringify({ object }, null, 1),
      JSON.stringify({ previous: {}, object }),
      `{"object": ${JSON.stringify(object)}}`,
      JSON.stringify({ object: rest }),
      JSON.stringify({ object: { ...rest, status } }),
      JSON.stringify({ object: { ...object, extra: 1 } }),
      `${JSON.stringify({ object })} `,
      JSON.stringify({ object: { ...object, labels: 'backend' } }),
      JSON.stringify({ object: { ...object, status: 3 } }),
    ];
    for (const data of shapes)
      expect({ data, got: reader(data) }).toEqual({ data, got: undefined });
    expect(reader(JSON.stringify({ object }))).toBeDefined();
  });

  it('reads the tasks in the order every event writer stores them (toTask)', () => {
    const task = toTask({
      task_id: 'a',
      project_id: 'b',
      tenant_id: 'c',
      title: 't',
      description: null,
      status: 'pending',
      created_at: '2026-12-05 01:07:27.021',
      updated_at: '2026-12-05 01:07:27.021',
      completed_at: null,
      priority: 0,
      due_on: null,
      labels: '[]',
      assignee: null,
      version: 1,
    });
    expect(Object.keys(task)).toEqual(taskFields);
    expect(taskReaderOf(new Set(taskFields))!(JSON.stringify({ object: task }))).toEqual(task);
  });
});
