/**
 * A database of the test's own, on the engine this jest project runs against: a new SQLite file
 * in a temporary folder, or a new database on the MySQL server at TEST_MYSQL_URL.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { DatabaseConfig } from '../../src/config';
import { createKnex } from '../../src/db/knex';
import { migrateToLatest } from '../../src/db/migrate';
import { createMysqlDatabase } from './mysql-database';

declare const testDatabase: 'sqlite' | 'mysql';

export const testEngine = testDatabase;

/** The MySQL server the tests create their databases on; no database part. */
export const mysqlServerUrl = process.env.TEST_MYSQL_URL || 'mysql://root@127.0.0.1:3306/';

export interface TestDatabase {
  config: DatabaseConfig;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `tt_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  if (testEngine === 'sqlite') {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-test-'));
    return {
      config: { client: 'sqlite', filename: path.join(folder, `${name}.sqlite`) },
      async drop() {
        fs.rmSync(folder, { recursive: true, force: true });
      },
    };
  }
  return createMysqlDatabase(mysqlServerUrl, name);
}

/** A database of the test's own, migrated to the latest schema, with a knex on it; `close` destroys both. */
export async function createMigratedDatabase(): Promise<{ knex: Knex; close(): Promise<void> }> {
  const database = await createTestDatabase();
  const knex = createKnex(database.config);
  await migrateToLatest(knex);
  return {
    knex,
    async close() {
      await knex.destroy();
      await database.drop();
    },
  };
}
