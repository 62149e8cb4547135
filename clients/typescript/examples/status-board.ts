/**
 * A status board written against API version 2026-11-28: it labels each task of a project by its
 * status, and its `switch` handles every status that version has. Switched to 2026-12-15 (the
 * `apiVersion` below), it stops compiling at the `never` in that `switch` until it handles
 * `cancelled`: the compiler shows where an upgrade needs work, before anything runs.
 */
import { createClient, type Task } from '@task-tracker/client';

const apiVersion = '2026-11-28';

export function label(status: Task<typeof apiVersion>['status']): string {
  switch (status) {
    case 'pending':
      return 'To do';
    case 'in_progress':
      return 'Doing';
    case 'done':
      return 'Done';
    default: {
      const unhandled: never = status;
      throw new Error(`a status this board does not know: ${String(unhandled)}`);
    }
  }
}

/** One line per task of the project: its label and its title. */
export async function statusBoard(
  baseUrl: string,
  apiKey: string,
  projectId: string,
): Promise<string[]> {
  const client = createClient({ baseUrl, apiKey, apiVersion });
  const lines: string[] = [];
  for await (const task of client.tasks.list(projectId))
    lines.push(`${label(task.status)}: ${task.title}`);
  return lines;
}
