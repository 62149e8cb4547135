import type { Knex } from 'knex';
import { apiKeysRepository } from './api-keys-repository';
import { idempotencyRepository } from './idempotency-repository';
import { projectsRepository } from './projects-repository';
import { tasksRepository } from './tasks-repository';
import { tenantsRepository } from './tenants-repository';

export type Repositories = ReturnType<typeof createRepositories>;

export function createRepositories(knex: Knex) {
  return {
    tenants: tenantsRepository(knex),
    apiKeys: apiKeysRepository(knex),
    projects: projectsRepository(knex),
    tasks: tasksRepository(knex),
    idempotency: idempotencyRepository(knex),
  };
}
