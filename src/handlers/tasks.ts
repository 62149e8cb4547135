import type { CoreRepositories } from '../db/repositories';
import { checkTaskFilter } from '../db/task-filter';
import type { Defaulted, OperationHandler, OperationInput } from './operation';
import { found, replyWith } from './operation';
import { versionedChanges } from './versioned-changes';

type ListQuery = Defaulted<OperationInput<'listProjectTasks'>['query'], 'limit' | 'sort'>;

export function taskHandlers({ tasks }: CoreRepositories) {
  const createTask: OperationHandler<'createTask'> = async ({ principal, body, write }) => {
    const task = await tasks.create(principal.tenantId, body, write);
    return { ...replyWith(201, task), location: `/v1/tasks/${task.value.task_id}` };
  };

  const getTask: OperationHandler<'getTask'> = async ({ principal, path }) =>
    replyWith(200, found(await tasks.find(principal.tenantId, path.task_id), 'task', path.task_id));

  const { update: updateTask, remove: deleteTask } = versionedChanges(tasks, 'task', 'task_id');

  const listProjectTasks: OperationHandler<'listProjectTasks'> = async ({
    principal,
    path,
    query,
  }) => ({
    status: 200,
    body: found(
      await tasks.listForProject(principal.tenantId, path.project_id, query as ListQuery),
      'project',
      path.project_id,
    ),
  });

  /** A read made by POST (its filter is no query string): outside the unit of work. */
  const searchTasks: OperationHandler<'searchTasks'> = async ({ principal, body }) => ({
    status: 200,
    body: await tasks.search(principal.tenantId, {
      filter: checkTaskFilter(body.filter, '/filter'),
      sort: body.sort ?? 'created_at',
      limit: body.limit ?? 50,
      cursor: body.cursor,
    }),
  });

  return { createTask, getTask, updateTask, deleteTask, listProjectTasks, searchTasks };
}
