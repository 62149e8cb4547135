import type { Knex } from 'knex';
import { fillStoredTasks } from '../stored-task-events';

// A task event written before 2026-12-15 gets its task's `completed_at` as the tasks' migration
// filled it (its `updated_at` when done, else null), added last, as the service writes it.
export async function up(knex: Knex): Promise<void> {
  await fillStoredTasks(knex, (task) => {
    if ('completed_at' in task) return false;
    task.completed_at = task.status === 'done' ? task.updated_at : null;
    return true;
  });
}

// 2026-11-28 readers never see the field: the service removes it for them.
export async function down(): Promise<void> {}
