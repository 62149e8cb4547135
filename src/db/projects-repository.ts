import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import type { components } from '../../generated/api';
import { translatingErrors } from './database-errors';
import type { EventLog } from './event-log';
import { selectPage } from './keyset';
import { fromDbTimestamp, nowForDb, type DbTimestamp } from './timestamps';
import type { Transaction, WriteContext } from './transactions';
import { recordedChanges } from './recorded-changes';
import { lockingRead, type Versioned } from './versioned';

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
  version: number;
  [column: string]: unknown;
}

function versioned(row: ProjectRow): Versioned<Project> {
  return { value: toProject(row), version: row.version };
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

export function projectsRepository(knex: Knex, events: EventLog) {
  const ofTenant = (db: Knex | Transaction, tenantId: string, projectId: string) =>
    db('projects').where({ project_id: projectId, tenant_id: tenantId });

  const scoped = (tenantId: string, projectId: string) => (trx: Transaction) =>
    ofTenant(trx, tenantId, projectId);
  const locked = (tenantId: string, projectId: string) => (trx: Transaction) =>
    lockingRead(knex, ofTenant(trx, tenantId, projectId).first()) as Promise<
      ProjectRow | undefined
    >;

  const changes = recordedChanges<ProjectRow, Project, ProjectUpdate>(events, {
    resource: 'project',
    toResource: toProject,
    projectOf: (project) => project.project_id,
    scoped,
    locked,
  });

  return translatingErrors({
    async create(
      tenantId: string,
      project: NewProject,
      write: WriteContext,
    ): Promise<Versioned<Project>> {
      const now = nowForDb();
      const row: ProjectRow = {
        project_id: uuidv7(),
        tenant_id: tenantId,
        ...project,
        created_at: now,
        updated_at: now,
        version: 1,
      };
      // Nothing can refuse a new project but the database itself: its insert goes with the event's and COMMIT, one round trip.
      await write.trx.later(knex('projects').insert(row).toSQL());
      const created = versioned(row);
      await events.record(write, {
        tenantId,
        type: 'project.created',
        projectId: row.project_id,
        object: created.value,
      });
      return created;
    },

    async find(
      tenantId: string,
      projectId: string,
      trx?: Knex.Transaction,
    ): Promise<Versioned<Project> | undefined> {
      const row: ProjectRow | undefined = await ofTenant(trx ?? knex, tenantId, projectId).first();
      return row && versioned(row);
    },

    async list(tenantId: string, page: { limit: number; cursor?: string }): Promise<ProjectPage> {
      const { rows, nextCursor } = await selectPage<ProjectRow>({
        db: knex,
        table: 'projects',
        idColumn: 'project_id',
        scope: (q, values) => q.where('projects.tenant_id', values.tenantId),
        order: { column: 'created_at', descending: false },
        ...page,
        values: { tenantId },
        shape: 'projects of a tenant',
      });
      return { data: rows.map(toProject), next_cursor: nextCursor };
    },

    update: changes.update,

    /**
     * Deletes the project and, by the foreign key's cascade, its tasks (with no event each); false
     * when there was none, 412 when the condition fails.
     */
    remove: changes.remove,
  });
}
