/**
 * For tests of what carries a transaction's statements to the database: a migrated database with
 * one tenant, `tenant`, rows of projects for it written as they are, and the statements knex
 * announces while some work runs.
 */
import type { Knex } from 'knex';
import { createMigratedDatabase } from './test-database';

export async function databaseWithTenant(): ReturnType<typeof createMigratedDatabase> {
  const database = await createMigratedDatabase();
  await database.knex('tenants').insert({
    tenant_id: 'tenant',
    name: 't',
    created_at: '2026-01-01 00:00:00.000',
  });
  return database;
}

export const projectRow = (id: string) => ({
  project_id: id,
  tenant_id: 'tenant',
  name: id,
  description: '',
  created_at: '2026-01-01 00:00:00.000',
  updated_at: '2026-01-01 00:00:00.000',
  version: 1,
});

export interface Sent {
  /** Each statement's first word, upper case. */
  statements: string[];
  /** Round trips to the database. */
  packets: number;
  /** Statements that went with the next rather than in a round trip of their own. */
  pipelined: number;
  /** What `run` failed with, if it did. */
  error?: unknown;
}

/** The statements knex announces while `run` runs, and how they went to the database. */
export async function statementsSent(knex: Knex, run: () => Promise<unknown>): Promise<Sent> {
  const sent: Sent = { statements: [], packets: 0, pipelined: 0 };
  const note = (query: { sql: string; pipelined?: boolean }) => {
    sent.statements.push(query.sql.replace(/;$/, '').split(' ')[0].toUpperCase());
    if (query.pipelined === true) sent.pipelined++;
    else sent.packets++;
  };
  knex.on('query', note);
  try {
    await run();
  } catch (error) {
    sent.error = error;
  } finally {
    knex.off('query', note);
  }
  return sent;
}
