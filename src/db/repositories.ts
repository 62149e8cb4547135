import type { Knex } from 'knex';
import { apiKeysRepository } from './api-keys-repository';
import { idempotencyRepository } from './idempotency-repository';
import { projectsRepository } from './projects-repository';
import { tasksRepository } from './tasks-repository';
import { tenantsRepository } from './tenants-repository';
import { inTransaction, type WriteContext } from './transactions';

export type Repositories = ReturnType<typeof createRepositories>;

export function createRepositories(knex: Knex) {
  return {
    tenants: tenantsRepository(knex),
    apiKeys: apiKeysRepository(knex),
    projects: projectsRepository(knex),
    tasks: tasksRepository(knex),
    idempotency: idempotencyRepository(knex),
    /** Runs a request's changes in one transaction (again, after a conflict the database reports). */
    inTransaction: <T>(requestId: string, work: (write: WriteContext) => Promise<T>) => inTransaction(knex, requestId, work),
  };
}
