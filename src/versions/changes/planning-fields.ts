/**
 * Version 2026-12-15: a task has `priority`, `due_on`, `labels` and `assignee`, set on create and
 * PATCH. Version 2026-11-28 has none of them: they are absent from its answers, its events and
 * their `data.previous`, and sending one is refused by its document (a 400 naming the field).
 */
import {
  eachExampleObject,
  eachTaskOfAnswer,
  eachTaskOfEvent,
  objectAt,
  removeProperty,
  type JsonObject,
  type VersionChange,
} from '../change';

const fields = ['priority', 'due_on', 'labels', 'assignee'];
const schemas = ['TaskPriority', 'DueOn', 'Label', 'Labels', 'Assignee'];

/** The fields in the reverse of the order a task has them (tasks-repository.ts' toTask). */
const lastFirst = [...fields].reverse();

/**
 * A task (or the fields an update changed) as 2026-11-28 shows it. Deleted last-added first: V8
 * undoes the last property of an object and keeps its fast layout, where deleting an earlier one
 * turns it into a dictionary, slower to read and to write out (a page of 50 tasks in 2026-11-28
 * costs 10 µs less, BENCHMARKS.md).
 */
function taskDown(task: JsonObject): void {
  for (const field of lastFirst) delete task[field];
}

function eventDown(event: JsonObject): JsonObject {
  eachTaskOfEvent(event, taskDown);
  return event;
}

export const planningFields: VersionChange = {
  sentence:
    'A task has `priority` (`none`, `low`, `medium`, `high`, `urgent`), `due_on` (a date or null), `labels` (a set of up to 20, the same when their case folds are) and `assignee` (or null), set on create and `PATCH` and shown in answers and events; earlier versions neither show nor take them.',

  document(newer) {
    for (const schema of ['Task', 'TaskCreate', 'TaskUpdate', 'PreviousValues'])
      for (const field of fields) removeProperty(newer, `/components/schemas/${schema}`, field);
    const components = objectAt(newer, '/components/schemas');
    for (const schema of schemas) {
      if (components[schema] === undefined) throw new Error(`no schema ${schema}`);
      delete components[schema];
    }
    eachExampleObject(newer, (object) => {
      if ('task_id' in object || fields.some((field) => field in object)) taskDown(object);
    });
    return newer;
  },

  answer(newer) {
    eachTaskOfAnswer(newer, taskDown, eventDown);
    return newer;
  },

  event: eventDown,
};
