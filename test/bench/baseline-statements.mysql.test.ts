/**
 * The benchmark's baseline claims to run the very statements the service runs; if a repository
 * changes its SQL, this fails until the baseline follows, so the published ratios stay fair.
 */
import { statementsByOperation } from './baseline-server';
import { seedFixture, withKnex } from './fixture';
import { serviceStatements } from './service-statements';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

it('runs the same statements for each benchmarked operation as the service does', async () => {
  const fixture = await withKnex(database.config, (knex) => seedFixture(knex, 60));
  const url = (database.config as { url: string }).url;
  expect(await serviceStatements(url, fixture)).toEqual(statementsByOperation);
});
