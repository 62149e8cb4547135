import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import type { components, operations } from '../../generated/api';
import { UnknownProjectError } from '../errors';
import { isForeignKeyViolation, translatingErrors } from './database-errors';
import { selectPage } from './keyset';
import { fromDbTimestamp, nowForDb, type DbTimestamp } from './timestamps';
import { changeVersioned, deleteVersioned, type VersionCondition, type Versioned } from './versioned';

type Task = components['schemas']['Task'];
type TaskPage = components['schemas']['TaskPage'];
type TaskCreate = components['schemas']['TaskCreate'];
type TaskUpdate = components['schemas']['TaskUpdate'];
type TaskStatus = components['schemas']['TaskStatus'];
type TaskSort = NonNullable<NonNullable<operations['listProjectTasks']['parameters']['query']>['sort']>;

interface TaskListQuery {
  status?: TaskStatus[];
  sort: TaskSort;
  limit: number;
  cursor?: string;
}

interface TaskRow {
  task_id: string;
  project_id: string;
  title: string;
  description: string | null;
  status: TaskStatus;
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
  version: number;
  [column: string]: unknown;
}

function versioned(row: TaskRow): Versioned<Task> {
  return { value: toTask(row), version: row.version };
}

function toTask(row: TaskRow): Task {
  return {
    task_id: row.task_id,
    project_id: row.project_id,
    title: row.title,
    description: row.description,
    status: row.status,
    created_at: fromDbTimestamp(row.created_at),
    updated_at: fromDbTimestamp(row.updated_at),
  };
}

export function tasksRepository(knex: Knex) {
  const tenantProjectIds = (db: Knex | Knex.Transaction, tenantId: string) =>
    db('projects').select('project_id').where('tenant_id', tenantId);
  const ofTenant = (db: Knex | Knex.Transaction, tenantId: string, taskId: string) =>
    db('tasks').where('task_id', taskId).whereIn('project_id', tenantProjectIds(db, tenantId));
  const projectOfTenant = (db: Knex | Knex.Transaction, tenantId: string, projectId: string) =>
    db('projects').first('project_id').where({ project_id: projectId, tenant_id: tenantId });

  return translatingErrors({
    /** Adds a pending task; UnknownProjectError when the tenant has no such project. */
    async create(tenantId: string, task: TaskCreate): Promise<Versioned<Task>> {
      const now = nowForDb();
      const row: TaskRow = {
        task_id: uuidv7(),
        project_id: task.project_id,
        title: task.title,
        description: task.description ?? null,
        status: 'pending',
        created_at: now,
        updated_at: now,
        version: 1,
      };
      await knex.transaction(async (trx) => {
        if ((await projectOfTenant(trx, tenantId, task.project_id)) === undefined) {
          throw new UnknownProjectError(task.project_id);
        }
        try {
          await trx('tasks').insert(row);
        } catch (error) {
          // The project was deleted between the check and the insert.
          throw isForeignKeyViolation(error) ? new UnknownProjectError(task.project_id) : error;
        }
      });
      return versioned(row);
    },

    async find(tenantId: string, taskId: string): Promise<Versioned<Task> | undefined> {
      const row: TaskRow | undefined = await ofTenant(knex, tenantId, taskId).first();
      return row && versioned(row);
    },

    /** A page of the project's tasks; undefined when the tenant has no such project. */
    async listForProject(tenantId: string, projectId: string, query: TaskListQuery): Promise<TaskPage | undefined> {
      if ((await projectOfTenant(knex, tenantId, projectId)) === undefined) return undefined;
      const { status, sort, limit, cursor } = query;
      const { rows, nextCursor } = await selectPage<TaskRow>({
        db: knex,
        table: 'tasks',
        idColumn: 'task_id',
        scope: (q) => {
          q.where('tasks.project_id', projectId);
          if (status) q.whereIn('tasks.status', status);
        },
        order: { column: sort.replace('-', '') as 'created_at' | 'updated_at', descending: sort.startsWith('-') },
        limit,
        cursor,
      });
      return { data: rows.map(toTask), next_cursor: nextCursor };
    },

    /** Applies the changes; undefined when the tenant has no such task, 412 when the condition fails. */
    async update(tenantId: string, taskId: string, changes: TaskUpdate, condition?: VersionCondition): Promise<Versioned<Task> | undefined> {
      return knex.transaction(async (trx) => {
        const row = await changeVersioned<TaskRow>(trx, () => ofTenant(trx, tenantId, taskId), changes, condition, 'task');
        return row && versioned(row);
      });
    },

    /** False when the tenant has no such task, 412 when the condition fails. */
    async remove(tenantId: string, taskId: string, condition?: VersionCondition): Promise<boolean> {
      return knex.transaction((trx) => deleteVersioned(() => ofTenant(trx, tenantId, taskId), condition, 'task'));
    },
  });
}
