/**
 * Every repository on one pool: the core resources' (src/db) and each feature's, put together
 * here so that src/db imports no feature and no feature imports another.
 */
import type { Knex } from 'knex';
import { createCoreRepositories } from './db/repositories';
import { createEventRepositories } from './events/repositories';
import { createWebhookRepositories } from './webhooks/repositories';

export type Repositories = ReturnType<typeof createRepositories>;

export function createRepositories(knex: Knex) {
  return {
    ...createCoreRepositories(knex),
    ...createEventRepositories(knex),
    ...createWebhookRepositories(knex),
  };
}
