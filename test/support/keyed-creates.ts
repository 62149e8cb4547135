/**
 * A load of task creates that each carry an Idempotency-Key of their own, for the crash tests:
 * writers create until stopped, a retry of every key afterwards, and what the database holds.
 */
import type { Knex } from 'knex';
import { generateApiKey, hashApiKey } from '../../src/api-key-format';
import type { DatabaseConfig } from '../../src/config';
import { createRepositories } from '../../src/all-repositories';
import { startService } from '../../src/server';
import { testConfig } from './test-config';

/** A tenant with a read-write key and one project, made on the database directly. */
export async function seedTenant(
  database: DatabaseConfig,
): Promise<{ key: string; projectId: string }> {
  const service = await startService(testConfig(database));
  try {
    const repositories = createRepositories(service.knex);
    const key = generateApiKey();
    const tenant = await repositories.tenants.findOrCreate('acme');
    await repositories.apiKeys.insert(tenant.tenant_id, hashApiKey(key), ['read', 'write']);
    const project = await repositories.inTransaction('fixture', (write) =>
      repositories.projects.create(tenant.tenant_id, { name: 'load', description: '' }, write),
    );
    return { key, projectId: project.value.project_id };
  } finally {
    await service.stop();
  }
}

export interface KeyedCreate {
  /** The Idempotency-Key, also the task's title. */
  key: string;
  /** The task id of a 201, when the service acknowledged it. */
  acknowledged?: string;
  /** When the 201 arrived (ms since the epoch). */
  acknowledgedAt?: number;
}

function createTask(url: string, apiKey: string, projectId: string, idempotencyKey: string) {
  return fetch(`${url}/v1/tasks`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${apiKey}`,
      'Content-Type': 'application/json',
      'Idempotency-Key': idempotencyKey,
    },
    body: JSON.stringify({ project_id: projectId, title: idempotencyKey }),
  });
}

/**
 * `writers` clients create tasks back to back, each with a new key (`prefix`, the writer and a
 * count), until `stop()`. A request the service could not answer (refused, reset) is remembered
 * as sent, its outcome unknown.
 */
export function startKeyedCreates(
  url: string,
  apiKey: string,
  projectId: string,
  writers: number,
  prefix = 'writer',
) {
  const creates: KeyedCreate[] = [];
  const statuses = new Map<number, number>();
  let stopped = false;
  const writer = async (w: number) => {
    for (let i = 0; !stopped; i++) {
      const create: KeyedCreate = { key: `${prefix}-${w}-${i}` };
      creates.push(create);
      try {
        const response = await createTask(url, apiKey, projectId, create.key);
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        const body = (await response.json()) as { task_id?: string };
        if (response.status === 201) {
          create.acknowledged = body.task_id;
          create.acknowledgedAt = Date.now();
        } else await new Promise((resolve) => setTimeout(resolve, 50));
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  };
  const running = Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
  return {
    creates,
    statuses,
    async stop() {
      stopped = true;
      await running;
    },
  };
}

/**
 * Sends every key again, as a client that never got an answer (or did) would, until it gets a
 * 201; the answer of each retry, by key.
 */
export async function retryEveryKey(
  url: string,
  apiKey: string,
  projectId: string,
  creates: KeyedCreate[],
) {
  const answers = new Map<string, { taskId: string; replayed: boolean }>();
  const deadline = Date.now() + 60_000;
  for (const { key } of creates) {
    for (;;) {
      const response = await createTask(url, apiKey, projectId, key);
      const body = (await response.json()) as { task_id?: string };
      if (response.status === 201) {
        answers.set(key, {
          taskId: body.task_id!,
          replayed: response.headers.get('idempotent-replayed') === 'true',
        });
        break;
      }
      if (Date.now() > deadline)
        throw new Error(
          `${key}: still ${response.status} ${JSON.stringify(body)} after a minute of retries`,
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return answers;
}

/** The ids of the stored tasks with each title. */
export async function taskIdsByTitle(knex: Knex, titles: string[]): Promise<Map<string, string[]>> {
  const rows: Array<{ title: string; task_id: string }> = await knex('tasks')
    .select('title', 'task_id')
    .whereIn('title', titles);
  const byTitle = new Map<string, string[]>();
  for (const row of rows) byTitle.set(row.title, [...(byTitle.get(row.title) ?? []), row.task_id]);
  return byTitle;
}
