/**
 * Version 2026-12-15: a task can be cancelled, closed without being done, and says when it was
 * closed (`completed_at`). Version 2026-11-28 has neither: there a cancelled task reads as done
 * everywhere (answers, lists, the feed, webhooks, `data.previous`), `completed_at` is absent, the
 * list's `status=done` also finds cancelled tasks, and `cancelled` sent is refused by its document
 * (a 400 naming `/status`).
 */
import {
  eachExampleObject,
  eachTaskOfAnswer,
  eachTaskOfEvent,
  objectAt,
  removeEnumValue,
  removeProperty,
  type JsonObject,
  type VersionChange,
} from '../change';

/** A task (or the fields an update changed, `data.previous`) as 2026-11-28 shows it. */
function taskDown(task: JsonObject): void {
  if (task.status === 'cancelled') task.status = 'done';
  delete task.completed_at;
}

/** An event as 2026-11-28 shows it: its task's, before and after the change. */
function eventDown(event: JsonObject): JsonObject {
  eachTaskOfEvent(event, taskDown);
  return event;
}

export const cancelledTasks: VersionChange = {
  sentence:
    'A task can be cancelled: `status` gains `cancelled` (closed without being done), and a task has `completed_at`, when it was done or cancelled (null while open); earlier versions see a cancelled task as `done`, without `completed_at`.',

  document(newer) {
    removeEnumValue(newer, '/components/schemas/TaskStatus', 'cancelled');
    const status = objectAt(newer, '/components/schemas/TaskStatus');
    if ('description' in status)
      status.description =
        '`pending`: not started. `in_progress`: actively being worked on. `done`: completed.\n';
    removeProperty(newer, '/components/schemas/Task', 'completed_at');
    removeProperty(newer, '/components/schemas/PreviousValues', 'completed_at');
    delete objectAt(newer, '/components/schemas').CompletedAt;
    eachExampleObject(newer, (object) => {
      if ('task_id' in object || 'completed_at' in object) taskDown(object);
    });
    return newer;
  },

  request(older) {
    // What 2026-11-28 calls done is done or cancelled: its filter finds both.
    const status = older.query.status;
    if (older.operationId === 'listProjectTasks' && status?.includes('done'))
      older.query.status = [...new Set([...status, 'cancelled'])];
    return older;
  },

  answer(newer) {
    eachTaskOfAnswer(newer, taskDown, eventDown);
    return newer;
  },

  event: eventDown,
};
