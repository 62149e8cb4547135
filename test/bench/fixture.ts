/**
 * What the benchmark works on: a database of its own, migrated, with a tenant, a key, a project
 * of tasks to read, change and list, and an empty project to create tasks in.
 */
import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import { issueApiKey } from '../../src/cli/issue-api-key';
import type { DatabaseConfig } from '../../src/config';
import { createKnex } from '../../src/db/knex';
import { migrateToLatest } from '../../src/db/migrate';
import { createRepositories } from '../../src/all-repositories';
import { toDbTimestamp } from '../../src/db/timestamps';
import type { Operation } from './load';

export interface Fixture {
  key: string;
  listedProjectId: string;
  emptyProjectId: string;
  taskIds: string[];
}

const statuses = ['pending', 'in_progress', 'done'] as const;

/** Tasks of one project, `count` of them, created a second apart from `start`, statuses mixed. */
export function taskRows(
  projectId: string,
  count: number,
  start = Date.parse('2026-01-01T00:00:00Z'),
) {
  return Array.from({ length: count }, (_, i) => {
    const at = toDbTimestamp(new Date(start + i * 1000).toISOString());
    return {
      task_id: uuidv7(),
      project_id: projectId,
      title: `task ${i}`,
      description: null,
      status: statuses[i % 3],
      created_at: at,
      updated_at: at,
      version: 1,
    };
  });
}

export async function seedFixture(knex: Knex, listedTasks: number): Promise<Fixture> {
  await migrateToLatest(knex);
  const repositories = createRepositories(knex);
  const { key, tenant } = await issueApiKey(repositories, 'bench', ['read', 'write']);
  const { tenant_id: tenantId } = await repositories.tenants.findOrCreate(tenant);
  const listedProjectId = (
    await repositories.inTransaction('fixture', (write) =>
      repositories.projects.create(tenantId, { name: 'listed', description: '' }, write),
    )
  ).value.project_id;
  const emptyProjectId = (
    await repositories.inTransaction('fixture', (write) =>
      repositories.projects.create(tenantId, { name: 'created into', description: '' }, write),
    )
  ).value.project_id;
  const rows = taskRows(listedProjectId, listedTasks);
  // SQLite takes at most 500 rows in one compound insert.
  await knex.batchInsert('tasks', rows, 400);
  return { key, listedProjectId, emptyProjectId, taskIds: rows.map((row) => row.task_id) };
}

export async function withKnex<T>(
  database: DatabaseConfig,
  work: (knex: Knex) => Promise<T>,
): Promise<T> {
  const knex = createKnex(database);
  try {
    return await work(knex);
  } finally {
    await knex.destroy();
  }
}

/** The four benchmarked operations, each cycling through the fixture's tasks. */
export function operations(fixture: Fixture): Operation[] {
  let read = 0;
  let changed = 0;
  const body = JSON.stringify({
    project_id: fixture.emptyProjectId,
    title: 'Write the benchmark report',
    description: 'With the figures.',
  });
  return [
    { name: 'createTask', next: () => ({ method: 'POST', path: '/v1/tasks', body }) },
    {
      name: 'getTask',
      next: () => ({
        method: 'GET',
        path: `/v1/tasks/${fixture.taskIds[read++ % fixture.taskIds.length]}`,
      }),
    },
    {
      name: 'updateTask',
      next: () => {
        const n = changed++;
        return {
          method: 'PATCH',
          path: `/v1/tasks/${fixture.taskIds[n % fixture.taskIds.length]}`,
          body: JSON.stringify({ status: statuses[Math.floor(n / fixture.taskIds.length) % 3] }),
        };
      },
    },
    {
      name: 'listProjectTasks',
      next: () => ({
        method: 'GET',
        path: `/v1/projects/${fixture.listedProjectId}/tasks?limit=50`,
      }),
    },
  ];
}
