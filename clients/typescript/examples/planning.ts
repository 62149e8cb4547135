/**
 * Planning in version 2026-12-15: one assignee's open tasks of high priority or above that are
 * overdue, across every project, moved to `in_progress` in one call once a dry run has said what
 * that would change. A misspelt field or operator in the filter does not compile.
 */
import type { TaskBulkResult, TaskFilter, TaskTrackerClient } from '@task-tracker/client';

export async function startOverdueWork(
  tt: TaskTrackerClient<'2026-12-15'>, // createClient({ apiVersion: '2026-12-15' })
  assignee: string,
  today = new Date().toISOString().slice(0, 10),
): Promise<TaskBulkResult> {
  const overdue: TaskFilter = {
    all: [
      { assignee: { eq: assignee } },
      { priority: { gte: 'high' } },
      { due_on: { lt: today } },
      { status: { in: ['pending', 'in_progress'] } },
    ],
  };
  // Every match, page after page, oldest first.
  for await (const task of tt.tasks.search(overdue, { sort: 'created_at' }))
    console.log(`${task.due_on} ${task.priority} ${task.status} ${task.title}`);

  const changes = { status: 'in_progress' } as const;
  const preview = await tt.tasks.bulkUpdate({ filter: overdue, changes, dryRun: true });
  // Those already in progress are matched but would not change.
  console.log(`${preview.matched} overdue, ${preview.changed} to start`);
  if (preview.changed === 0) return preview;
  // All or nothing, one event per task changed; a retry sends the same Idempotency-Key.
  return tt.tasks.bulkUpdate({ filter: overdue, changes });
}
