import type { Knex } from 'knex';
import { deliveryQueueRepository } from './delivery-queue-repository';
import { webhookDeliveriesRepository } from './webhook-deliveries-repository';
import { webhookEndpointsRepository } from './webhook-endpoints-repository';
import { webhookPlanningRepository } from './webhook-planning-repository';
import { tenantPauses } from './tenant-pauses';

export type WebhookRepositories = ReturnType<typeof createWebhookRepositories>;

/** The webhooks feature's SQL: endpoints, the tenant's log of attempts, planning, the worker's queue and paused tenants. */
export function createWebhookRepositories(knex: Knex) {
  return {
    webhookEndpoints: webhookEndpointsRepository(knex),
    webhookDeliveries: webhookDeliveriesRepository(knex),
    deliveryQueue: deliveryQueueRepository(knex),
    webhookPlanning: webhookPlanningRepository(knex),
    tenantPauses: tenantPauses(knex),
  };
}
