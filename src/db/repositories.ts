import type { Knex } from 'knex';
import { apiKeysRepository } from './api-keys-repository';
import { deliveryQueueRepository } from '../webhooks/delivery-queue-repository';
import { eventsRepository } from '../events/events-repository';
import { idempotencyRepository } from './idempotency-repository';
import { leasesRepository } from '../events/leases-repository';
import { projectsRepository } from './projects-repository';
import { tasksRepository } from './tasks-repository';
import { tenantsRepository } from './tenants-repository';
import { inTransaction, type WriteContext } from './transactions';
import { webhookDeliveriesRepository } from '../webhooks/webhook-deliveries-repository';
import { webhookEndpointsRepository } from '../webhooks/webhook-endpoints-repository';
import { webhookPlanningRepository } from '../webhooks/webhook-planning-repository';

export type Repositories = ReturnType<typeof createRepositories>;

export function createRepositories(knex: Knex) {
  const events = eventsRepository(knex);
  return {
    tenants: tenantsRepository(knex),
    apiKeys: apiKeysRepository(knex),
    projects: projectsRepository(knex, events),
    tasks: tasksRepository(knex, events),
    events,
    leases: leasesRepository(knex),
    idempotency: idempotencyRepository(knex),
    webhookEndpoints: webhookEndpointsRepository(knex),
    webhookDeliveries: webhookDeliveriesRepository(knex),
    deliveryQueue: deliveryQueueRepository(knex),
    webhookPlanning: webhookPlanningRepository(knex),
    /** Runs a request's changes in one transaction (again, after a conflict the database reports). */
    inTransaction<T>(requestId: string, work: (write: WriteContext) => Promise<T>): Promise<T> {
      return inTransaction(knex, requestId, work);
    },
  };
}
