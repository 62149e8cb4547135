/**
 * A worker that keeps a local copy of a tenant's projects and tasks: on its first start (or when
 * its cursor has expired) it takes the feed's head, reads every project and task, then follows the
 * feed from that head, applying each change and storing the cursor after it. A change made while
 * it reads is seen twice (in the read and in the feed), never missed; applying is idempotent.
 *
 *   TASK_TRACKER_URL=http://127.0.0.1:3000 TASK_TRACKER_API_KEY=tt_… node sync-worker.js
 */
import {
  createClient,
  CursorExpiredError,
  type Project,
  type Task,
  type TaskTrackerClient,
  type TypedEvent,
} from '@task-tracker/client';

/** Where the worker keeps its copy and its cursor: a database in a real worker. */
export interface Mirror {
  projects: Map<string, Project>;
  tasks: Map<string, Task>;
  cursor?: string;
}

function apply(mirror: Mirror, event: TypedEvent): void {
  switch (event.type) {
    case 'project.created':
    case 'project.updated':
      mirror.projects.set(event.data.object.project_id, event.data.object);
      break;
    case 'project.deleted':
      mirror.projects.delete(event.data.object.project_id);
      for (const [id, task] of mirror.tasks)
        if (task.project_id === event.data.object.project_id) mirror.tasks.delete(id);
      break;
    case 'task.created':
    case 'task.updated':
      mirror.tasks.set(event.data.object.task_id, event.data.object);
      break;
    case 'task.deleted':
      mirror.tasks.delete(event.data.object.task_id);
      break;
  }
}

async function resynchronise(
  client: TaskTrackerClient,
  mirror: Mirror,
  head: string,
): Promise<void> {
  mirror.projects.clear();
  mirror.tasks.clear();
  for await (const project of client.projects.list({ limit: 200 })) {
    mirror.projects.set(project.project_id, project);
    for await (const task of client.tasks.list(project.project_id, { limit: 200 }))
      mirror.tasks.set(task.task_id, task);
  }
  mirror.cursor = head;
}

/** Runs until `signal` aborts. */
export async function runSyncWorker(
  client: TaskTrackerClient,
  mirror: Mirror,
  signal: AbortSignal,
): Promise<void> {
  while (!signal.aborted) {
    if (mirror.cursor === undefined)
      await resynchronise(
        client,
        mirror,
        (await client.events.page({ from: 'latest' })).next_cursor,
      );
    try {
      const following = client.events.follow({
        from: mirror.cursor,
        signal,
        // Persist first: the position is stored before any event is handled, so a worker stopped
        // before its first event resumes here (with `from: 'latest'`, the head when it started).
        onStart: (cursor) => {
          mirror.cursor = cursor;
        },
      });
      for await (const event of following) {
        apply(mirror, event);
        mirror.cursor = event.cursor;
      }
    } catch (error) {
      if (!(error instanceof CursorExpiredError)) throw error;
      await resynchronise(
        client,
        mirror,
        error.latestCursor ?? (await client.events.page({ from: 'latest' })).next_cursor,
      );
    }
  }
}

if (require.main === module) {
  // The URL and the key from TASK_TRACKER_URL and TASK_TRACKER_API_KEY.
  const client = createClient();
  const mirror: Mirror = { projects: new Map(), tasks: new Map() };
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  setInterval(
    () =>
      console.log(
        `${mirror.projects.size} projects, ${mirror.tasks.size} tasks, cursor ${mirror.cursor}`,
      ),
    5000,
  ).unref();
  runSyncWorker(client, mirror, stop.signal).catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
