import type { CoreRepositories } from '../db/repositories';
import type { Defaulted, OperationHandler, OperationInput } from './operation';
import { found, replyWith } from './operation';
import { versionedChanges } from './versioned-changes';

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

  const { update: updateProject, remove: deleteProject } = versionedChanges(
    projects,
    'project',
    'project_id',
  );

  return { createProject, listProjects, getProject, updateProject, deleteProject };
}
