import type { Knex } from 'knex';
import { deliveryQueueRepository } from './delivery-queue-repository';
import { webhookDeliveriesRepository } from './webhook-deliveries-repository';
import { webhookEndpointsRepository } from './webhook-endpoints-repository';
import { webhookPlanningRepository } from './webhook-planning-repository';

export type WebhookRepositories = ReturnType<typeof createWebhookRepositories>;

/** The webhooks feature's SQL: endpoints, the tenant's log of attempts, planning and the worker's queue. */
export function createWebhookRepositories(knex: Knex) {
  return {
    webhookEndpoints: webhookEndpointsRepository(knex),
    webhookDeliveries: webhookDeliveriesRepository(knex),
    deliveryQueue: deliveryQueueRepository(knex),
    webhookPlanning: webhookPlanningRepository(knex),
  };
}
