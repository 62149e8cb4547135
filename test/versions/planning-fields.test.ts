/**
 * The change of 2026-12-15, the planning fields, as 2026-11-28 must see it: through the
 * migrations as the service will run them, with a registry in which it is the newest version's
 * only change.
 */
import type { JsonObject } from '../../src/versions/change';
import { planningFields } from '../../src/versions/changes/planning-fields';
import { documentFor } from '../../src/versions/documents';
import { answerDown, eventDown, requestUp } from '../../src/versions/migrate';
import type { SupportedVersion } from '../../src/versions/versions';

const registry: SupportedVersion[] = [
  {
    version: '2026-12-15',
    releasedOn: '2026-12-15',
    status: 'supported',
    changes: [planningFields],
  },
  { version: '2026-11-28', releasedOn: '2026-11-28', status: 'supported', changes: [] },
];

const planning = {
  priority: 'high',
  due_on: '2026-12-24',
  labels: ['ops', 'Web'],
  assignee: 'ana',
};
const asBefore: JsonObject = {
  task_id: 't1',
  project_id: 'p1',
  title: 'Ship',
  description: null,
  status: 'pending',
  created_at: '2026-12-15T10:00:00.000Z',
  updated_at: '2026-12-15T11:00:00.000Z',
};
const task = (): JsonObject => ({ ...asBefore, ...planning });
const down = (operationId: string, body: JsonObject, status = 200) =>
  answerDown('2026-11-28', { operationId, status, body }, registry).body;

it('takes the fields, their schemas and their examples out of the document, and fails loudly on one without them', () => {
  const property = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const fields = {
    priority: property('TaskPriority'),
    due_on: property('DueOn'),
    labels: property('Labels'),
    assignee: property('Assignee'),
  };
  const newest: JsonObject = {
    openapi: '3.0.3',
    info: { title: 't', version: '2026-12-15' },
    components: {
      schemas: {
        TaskPriority: { type: 'string' },
        DueOn: { type: 'string' },
        Label: { type: 'string' },
        Labels: { type: 'array', items: property('Label') },
        Assignee: { type: 'string' },
        Task: {
          type: 'object',
          required: ['task_id', 'priority', 'due_on', 'labels', 'assignee'],
          properties: { task_id: {}, ...fields },
          example: task(),
        },
        TaskCreate: { type: 'object', properties: { title: {}, ...fields } },
        TaskUpdate: { type: 'object', properties: { title: {}, ...fields } },
        PreviousValues: { type: 'object', properties: { title: {}, ...fields } },
      },
      examples: { Task: { value: task() } },
    },
  };
  const older = documentFor('2026-11-28', newest, registry);
  expect(older.components).toEqual({
    schemas: {
      Task: {
        type: 'object',
        required: ['task_id'],
        properties: { task_id: {} },
        example: asBefore,
      },
      TaskCreate: { type: 'object', properties: { title: {} } },
      TaskUpdate: { type: 'object', properties: { title: {} } },
      PreviousValues: { type: 'object', properties: { title: {} } },
    },
    examples: { Task: { value: asBefore } },
  });
  expect(() => documentFor('2026-11-28', older, registry)).toThrow(/has no property priority/);
});

it('takes the fields out of every answer that carries tasks, and leaves problems alone', () => {
  for (const operationId of ['createTask', 'getTask', 'updateTask'])
    expect(down(operationId, task())).toEqual(asBefore);
  expect(down('listProjectTasks', { data: [task(), task()], next_cursor: null })).toEqual({
    data: [asBefore, asBefore],
    next_cursor: null,
  });
  const problem = { type: '/problems/invalid-request', status: 400, priority: 'x' };
  expect(down('createTask', problem, 400)).toEqual(problem);
  // The newest version's reader gets them as they are.
  expect(
    answerDown('2026-12-15', { operationId: 'getTask', status: 200, body: task() }, registry).body,
  ).toEqual(task());
});

it("takes the fields out of a task's events, data.previous included, and leaves project events alone", () => {
  const updated: JsonObject = {
    event_id: 'e1',
    type: 'task.updated',
    data: {
      object: task(),
      previous: { labels: [], due_on: null, updated_at: '2026-12-15T10:00:00.000Z' },
    },
  };
  const shown = {
    event_id: 'e1',
    type: 'task.updated',
    data: { object: asBefore, previous: { updated_at: '2026-12-15T10:00:00.000Z' } },
  };
  expect(eventDown('2026-11-28', updated, registry)).toEqual(shown);
  const projectEvent = {
    event_id: 'e2',
    type: 'project.updated',
    data: { object: { project_id: 'p1', priority: 'kept' } },
  };
  expect(down('listEvents', { data: [updated, projectEvent], next_cursor: 'c' })).toEqual({
    data: [shown, projectEvent],
    next_cursor: 'c',
  });
  expect(eventDown('2026-12-15', updated, registry)).toEqual(updated);
});

it('leaves requests as they are: 2026-11-28 cannot send the fields, its document refuses them', () => {
  const request = { operationId: 'createTask', query: {}, body: { title: 'x' } };
  expect(requestUp('2026-11-28', request, registry)).toEqual(request);
});
