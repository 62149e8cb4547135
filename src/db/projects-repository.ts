import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import type { components } from '../../generated/api';
import { translatingErrors } from './database-errors';
import { selectPage } from './keyset';
import { fromDbTimestamp, nowForDb, type DbTimestamp } from './timestamps';
import { updatedAtNotBeforeCreation } from './updated-at';

type Project = components['schemas']['Project'];
type ProjectPage = components['schemas']['ProjectPage'];
type ProjectUpdate = components['schemas']['ProjectUpdate'];

interface NewProject {
  name: string;
  description: string;
}

interface ProjectRow {
  project_id: string;
  tenant_id: string;
  name: string;
  description: string;
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
  [column: string]: unknown;
}

function toProject(row: ProjectRow): Project {
  return {
    project_id: row.project_id,
    name: row.name,
    description: row.description,
    created_at: fromDbTimestamp(row.created_at),
    updated_at: fromDbTimestamp(row.updated_at),
  };
}

export function projectsRepository(knex: Knex) {
  const ofTenant = (db: Knex | Knex.Transaction, tenantId: string, projectId: string) =>
    db('projects').where({ project_id: projectId, tenant_id: tenantId });

  return translatingErrors({
    async create(tenantId: string, project: NewProject, trx?: Knex.Transaction): Promise<Project> {
      const now = nowForDb();
      const row: ProjectRow = { project_id: uuidv7(), tenant_id: tenantId, ...project, created_at: now, updated_at: now };
      await (trx ?? knex)('projects').insert(row);
      return toProject(row);
    },

    async find(tenantId: string, projectId: string, trx?: Knex.Transaction): Promise<Project | undefined> {
      const row: ProjectRow | undefined = await ofTenant(trx ?? knex, tenantId, projectId).first();
      return row && toProject(row);
    },

    async exists(tenantId: string, projectId: string, trx?: Knex.Transaction): Promise<boolean> {
      return (await ofTenant(trx ?? knex, tenantId, projectId).first('project_id')) !== undefined;
    },

    async list(tenantId: string, page: { limit: number; cursor?: string }, trx?: Knex.Transaction): Promise<ProjectPage> {
      const { rows, nextCursor } = await selectPage<ProjectRow>({
        db: trx ?? knex,
        table: 'projects',
        idColumn: 'project_id',
        scope: (q) => q.where('projects.tenant_id', tenantId),
        order: { column: 'created_at', descending: false },
        ...page,
      });
      return { data: rows.map(toProject), next_cursor: nextCursor };
    },

    /** Applies the changes; undefined when the tenant has no such project. */
    async update(tenantId: string, projectId: string, changes: ProjectUpdate): Promise<Project | undefined> {
      return knex.transaction(async (trx) => {
        const updated = await ofTenant(trx, tenantId, projectId).update({
          ...changes,
          updated_at: updatedAtNotBeforeCreation(trx),
        });
        if (updated === 0) return undefined;
        return toProject(await ofTenant(trx, tenantId, projectId).first());
      });
    },

    /** Deletes the project and, by the foreign key's cascade, its tasks; false when there was none. */
    async remove(tenantId: string, projectId: string): Promise<boolean> {
      return (await ofTenant(knex, tenantId, projectId).delete()) > 0;
    },
  });
}
