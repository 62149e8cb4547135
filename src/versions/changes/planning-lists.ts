/**
 * Version 2026-12-15: a project's task list filters by the planning fields (`priority`,
 * `assignee`, `label`, `due_before`, `due_after`) and sorts by `due_on` and `priority`. Version
 * 2026-11-28 has none of these parameters or sort values: its document refuses them (a 400 naming
 * the parameter), so no request of it carries one and no answer needs changing.
 */
import { objectAt, removeEnumValue, type JsonObject, type VersionChange } from '../change';

const listOperation = '/paths/~1v1~1projects~1{project_id}~1tasks/get';
const filters = [
  'TaskPriorityFilter',
  'TaskAssigneeFilter',
  'TaskLabelFilter',
  'TaskDueBefore',
  'TaskDueAfter',
];
const sorts = ['due_on', '-due_on', 'priority', '-priority'];

export const planningLists: VersionChange = {
  sentence:
    "A project's task list filters by `priority` (any of), `assignee`, `label` (all of, by case fold), `due_before` and `due_after`, and sorts by `due_on` and `priority` (`-` for descending; tasks without `due_on` last either way); earlier versions take none of these.",

  document(newer) {
    const operation = objectAt(newer, listOperation);
    const references = filters.map((name) => `#/components/parameters/${name}`);
    const parameters = (operation.parameters ?? []) as JsonObject[];
    const kept = parameters.filter((parameter) => !references.includes(String(parameter.$ref)));
    if (kept.length !== parameters.length - filters.length)
      throw new Error(`${listOperation} lacks one of ${filters.join(', ')}`);
    operation.parameters = kept;
    operation.description =
      "The project's tasks, a page at a time, optionally only those in the given states,\n" +
      'ordered by `sort` with ties broken by id.\n';

    const components = objectAt(newer, '/components/parameters');
    for (const name of filters) delete components[name];
    for (const sort of sorts)
      removeEnumValue(newer, '/components/parameters/TaskSort/schema', sort);
    objectAt(newer, '/components/parameters/TaskSort').description =
      'The order of the list; a leading `-` means newest first. Ties are broken by id.';
    return newer;
  },
};
