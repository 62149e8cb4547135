import type { Knex } from 'knex';
import { eventsRepository } from './events-repository';
import { leasesRepository } from './leases-repository';

export type EventRepositories = ReturnType<typeof createEventRepositories>;

/** The events feature's SQL: numbering (under its lease) and the feed. */
export function createEventRepositories(knex: Knex) {
  return { events: eventsRepository(knex), leases: leasesRepository(knex) };
}
