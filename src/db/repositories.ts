import type { Knex } from 'knex';
import { apiKeysRepository } from './api-keys-repository';
import { bulkSlotsRepository } from './bulk-slots';
import { eventLog } from './event-log';
import { idempotencyRepository } from './idempotency-repository';
import { projectsRepository } from './projects-repository';
import { tasksBulkRepository } from './tasks-bulk-repository';
import { tasksRepository } from './tasks-repository';
import { tenantsRepository } from './tenants-repository';
import { inTransaction, type WriteContext } from './transactions';

export type CoreRepositories = ReturnType<typeof createCoreRepositories>;

/** The core resources' repositories; each feature makes its own (src/events, src/webhooks), and src/repositories.ts puts them together. */
export function createCoreRepositories(knex: Knex) {
  const events = eventLog(knex);
  return {
    tenants: tenantsRepository(knex),
    apiKeys: apiKeysRepository(knex),
    projects: projectsRepository(knex, events),
    tasks: tasksRepository(knex, events),
    tasksBulk: tasksBulkRepository(knex, events),
    bulkSlots: bulkSlotsRepository(knex),
    eventLog: events,
    idempotency: idempotencyRepository(knex),
    /** Runs a request's changes in one transaction (again, after a conflict the database reports). */
    inTransaction<T>(requestId: string, work: (write: WriteContext) => Promise<T>): Promise<T> {
      return inTransaction(knex, requestId, work, { forRequest: true });
    },
  };
}
