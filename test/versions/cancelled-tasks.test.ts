/**
 * The change of 2026-12-15, cancelled tasks, as 2026-11-28 must see it: through the migrations as
 * the service will run them, with a registry in which it is the newest version's change.
 */
import type { JsonObject } from '../../src/versions/change';
import { cancelledTasks } from '../../src/versions/changes/cancelled-tasks';
import { documentFor } from '../../src/versions/documents';
import { answerDown, eventDown, requestUp } from '../../src/versions/migrate';
import type { SupportedVersion } from '../../src/versions/versions';

const registry: SupportedVersion[] = [
  {
    version: '2026-12-15',
    releasedOn: '2026-12-15',
    status: 'supported',
    changes: [cancelledTasks],
  },
  { version: '2026-11-28', releasedOn: '2026-11-28', status: 'supported', changes: [] },
];

const task = (fields: JsonObject = {}): JsonObject => ({
  task_id: 't1',
  project_id: 'p1',
  title: 'Ship',
  description: null,
  status: 'cancelled',
  created_at: '2026-12-15T10:00:00.000Z',
  updated_at: '2026-12-15T11:00:00.000Z',
  completed_at: '2026-12-15T11:00:00.000Z',
  ...fields,
});
const asBefore = (fields: JsonObject = {}) => {
  const { completed_at: _, ...rest } = task({ status: 'done', ...fields });
  return rest;
};
const down = (operationId: string, body: JsonObject, status = 200) =>
  answerDown('2026-11-28', { operationId, status, body }, registry).body;

it('takes cancelled and completed_at out of the document, and fails loudly on one that has neither', () => {
  const newest: JsonObject = {
    openapi: '3.0.3',
    info: { title: 't', version: '2026-12-15' },
    components: {
      schemas: {
        TaskStatus: { type: 'string', enum: ['pending', 'in_progress', 'done', 'cancelled'] },
        Task: {
          type: 'object',
          required: ['task_id', 'status', 'completed_at'],
          properties: { task_id: {}, status: {}, completed_at: { nullable: true } },
        },
        PreviousValues: { type: 'object', properties: { status: {}, completed_at: {} } },
      },
    },
  };
  const older = documentFor('2026-11-28', newest, registry);
  expect(older.components).toEqual({
    schemas: {
      TaskStatus: { type: 'string', enum: ['pending', 'in_progress', 'done'] },
      Task: {
        type: 'object',
        required: ['task_id', 'status'],
        properties: { task_id: {}, status: {} },
      },
      PreviousValues: { type: 'object', properties: { status: {} } },
    },
  });
  expect(() => documentFor('2026-11-28', older, registry)).toThrow(/no enum value cancelled/);
});

it('shows a cancelled task as done, without completed_at, in every answer that carries tasks', () => {
  for (const operationId of ['createTask', 'getTask', 'updateTask'])
    expect(down(operationId, task())).toEqual(asBefore());
  expect(down('getTask', task({ status: 'pending', completed_at: null }))).toEqual(
    asBefore({ status: 'pending' }),
  );
  expect(
    down('listProjectTasks', {
      data: [task(), task({ status: 'in_progress' })],
      next_cursor: null,
    }),
  ).toEqual({ data: [asBefore(), asBefore({ status: 'in_progress' })], next_cursor: null });
  // A problem is not a task, whatever it says.
  const problem = { type: '/problems/not-found', status: 404, detail: 'cancelled' };
  expect(down('getTask', problem, 404)).toEqual(problem);
});

it("shows a task's events as 2026-11-28 would: in_progress to cancelled as to done, done to cancelled with done before", () => {
  const event = (object: JsonObject, previous?: JsonObject): JsonObject => ({
    event_id: 'e1',
    type: 'task.updated',
    data: previous ? { object, previous } : { object },
  });
  const closed = event(task(), {
    status: 'in_progress',
    completed_at: null,
    updated_at: '2026-12-15T10:30:00.000Z',
  });
  expect(eventDown('2026-11-28', closed, registry)).toEqual(
    event(asBefore(), { status: 'in_progress', updated_at: '2026-12-15T10:30:00.000Z' }),
  );
  const fromDone = event(task(), { status: 'done', updated_at: '2026-12-15T10:30:00.000Z' });
  expect(eventDown('2026-11-28', fromDone, registry)).toEqual(
    event(asBefore(), { status: 'done', updated_at: '2026-12-15T10:30:00.000Z' }),
  );
  // The feed's page, in the same way; a project's event is left as it is.
  const projectEvent = {
    event_id: 'e2',
    type: 'project.updated',
    data: { object: { status: 'x' } },
  };
  expect(down('listEvents', { data: [closed, projectEvent], next_cursor: 'c' })).toEqual({
    data: [eventDown('2026-11-28', closed, registry), projectEvent],
    next_cursor: 'c',
  });
  // The newest version's reader sees the event as stored.
  expect(eventDown('2026-12-15', closed, registry)).toEqual(closed);
});

it("makes 2026-11-28's status=done filter find cancelled tasks too, and nothing else", () => {
  const up = (operationId: string, status?: string[]) =>
    requestUp(
      '2026-11-28',
      { operationId, query: status ? { status } : {}, body: undefined },
      registry,
    ).query;
  expect(up('listProjectTasks', ['done'])).toEqual({ status: ['done', 'cancelled'] });
  expect(up('listProjectTasks', ['pending', 'done'])).toEqual({
    status: ['pending', 'done', 'cancelled'],
  });
  expect(up('listProjectTasks', ['pending'])).toEqual({ status: ['pending'] });
  expect(up('listProjectTasks')).toEqual({});
  expect(up('listEvents', ['done'])).toEqual({ status: ['done'] });
});
