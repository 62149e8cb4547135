/**
 * The change of 2026-12-15 to a project's task list, as 2026-11-28 must see it: its document
 * without the planning filters and sort values, with a registry in which it is the newest
 * version's only change. (What the real document becomes is the gate's; the 400s are
 * test/api/planning-lists.test.ts's.)
 */
import type { JsonObject } from '../../src/versions/change';
import { planningLists } from '../../src/versions/changes/planning-lists';
import { documentFor } from '../../src/versions/documents';
import type { SupportedVersion } from '../../src/versions/versions';

const registry: SupportedVersion[] = [
  {
    version: '2026-12-15',
    releasedOn: '2026-12-15',
    status: 'supported',
    changes: [planningLists],
  },
  { version: '2026-11-28', releasedOn: '2026-11-28', status: 'supported', changes: [] },
];

const filters = [
  'TaskPriorityFilter',
  'TaskAssigneeFilter',
  'TaskLabelFilter',
  'TaskDueBefore',
  'TaskDueAfter',
];
const ref = (name: string) => ({ $ref: `#/components/parameters/${name}` });

function newest(): JsonObject {
  return {
    openapi: '3.0.3',
    info: { title: 't', version: '2026-12-15' },
    paths: {
      '/v1/projects/{project_id}/tasks': {
        get: {
          operationId: 'listProjectTasks',
          description: 'new',
          parameters: [ref('TaskStatusFilter'), ...filters.map(ref), ref('TaskSort'), ref('Limit')],
        },
      },
    },
    components: {
      parameters: {
        TaskStatusFilter: { name: 'status' },
        ...Object.fromEntries(filters.map((name) => [name, { name }])),
        TaskSort: {
          name: 'sort',
          description: 'new',
          schema: {
            type: 'string',
            enum: ['created_at', '-created_at', 'due_on', '-due_on', 'priority', '-priority'],
          },
        },
        Limit: { name: 'limit' },
      },
    },
  };
}

it('takes the filters and sort values out of the list and its parameters, and nothing else', () => {
  const older = documentFor('2026-11-28', newest(), registry);
  const operation = (older.paths as any)['/v1/projects/{project_id}/tasks'].get;
  expect(operation.parameters).toEqual([ref('TaskStatusFilter'), ref('TaskSort'), ref('Limit')]);
  const parameters = (older.components as any).parameters;
  expect(Object.keys(parameters)).toEqual(['TaskStatusFilter', 'TaskSort', 'Limit']);
  expect(parameters.TaskSort.schema.enum).toEqual(['created_at', '-created_at']);
});

it('fails loudly on a document without the filters or the sort values', () => {
  const withoutLabel = newest();
  const get = (withoutLabel.paths as any)['/v1/projects/{project_id}/tasks'].get;
  get.parameters = get.parameters.filter(
    (parameter: { $ref: string }) => !parameter.$ref.endsWith('TaskLabelFilter'),
  );
  expect(() => documentFor('2026-11-28', withoutLabel, registry)).toThrow(/lacks one of/);
  const withoutSort = newest();
  (withoutSort.components as any).parameters.TaskSort.schema.enum = ['created_at'];
  expect(() => documentFor('2026-11-28', withoutSort, registry)).toThrow(/no enum value due_on/);
});
