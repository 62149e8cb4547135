import type { CoreRepositories } from '../db/repositories';
import { versionsAccepted } from './entity-tags';
import type { Defaulted, OperationHandler, OperationInput } from './operation';
import { found, removed, replyWith } from './operation';

type ListQuery = Defaulted<OperationInput<'listProjects'>['query'], 'limit'>;

export function projectHandlers({ projects }: CoreRepositories) {
  const createProject: OperationHandler<'createProject'> = async ({ principal, body, write }) => {
    const project = await projects.create(
      principal.tenantId,
      { name: body.name, description: body.description ?? '' },
      write,
    );
    return { ...replyWith(201, project), location: `/v1/projects/${project.value.project_id}` };
  };

  const listProjects: OperationHandler<'listProjects'> = async ({ principal, query }) => ({
    status: 200,
    body: await projects.list(principal.tenantId, query as ListQuery),
  });

  const getProject: OperationHandler<'getProject'> = async ({ principal, path }) =>
    replyWith(
      200,
      found(await projects.find(principal.tenantId, path.project_id), 'project', path.project_id),
    );

  const updateProject: OperationHandler<'updateProject'> = async ({
    principal,
    path,
    headers,
    body,
    write,
  }) => {
    const project = await projects.update(
      principal.tenantId,
      path.project_id,
      body,
      versionsAccepted(headers['If-Match']),
      write,
    );
    return replyWith(200, found(project, 'project', path.project_id));
  };

  const deleteProject: OperationHandler<'deleteProject'> = async ({
    principal,
    path,
    headers,
    write,
  }) =>
    removed(
      await projects.remove(
        principal.tenantId,
        path.project_id,
        versionsAccepted(headers['If-Match']),
        write,
      ),
      'project',
      path.project_id,
    );

  return { createProject, listProjects, getProject, updateProject, deleteProject };
}
