import type { Knex } from 'knex';
import { fillStoredTasks } from '../stored-task-events';

// A task event written before the planning fields gets them as the tasks' migration filled the
// rows (priority none, no due date, no labels, nobody assigned), added last, as the service
// writes them.
export async function up(knex: Knex): Promise<void> {
  await fillStoredTasks(knex, (task) => {
    if ('priority' in task) return false;
    Object.assign(task, { priority: 'none', due_on: null, labels: [], assignee: null });
    return true;
  });
}

// 2026-11-28 readers never see the fields: the service removes them for them.
export async function down(): Promise<void> {}
