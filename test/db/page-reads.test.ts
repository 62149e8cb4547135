/**
 * Pages of long rows are built one per turn of the event loop, so that other requests are
 * answered between them, and are read two at a time; short pages are read as many at once as
 * the pool allows. Through the real repository, on the engine this jest project runs against.
 */
import type { Knex } from 'knex';
import { createKnex } from '../../src/db/knex';
import { migrateToLatest } from '../../src/db/migrate';
import { createRepositories, type Repositories } from '../../src/all-repositories';
import { createTestDatabase, testEngine, type TestDatabase } from '../support/test-database';
import { taskRows } from '../bench/fixture';

let database: TestDatabase;
let knex: Knex;
let repositories: Repositories;
let tenantId: string;
/** 30 tasks of 10,000 characters: about 300 KB, whose length alone may pass the 1 MiB limit. */
let longProject: string;
let shortProject: string;

beforeAll(async () => {
  database = await createTestDatabase();
  knex = createKnex(database.config);
  await migrateToLatest(knex);
  repositories = createRepositories(knex);
  tenantId = (await repositories.tenants.findOrCreate('pages')).tenant_id;
  const project = async (name: string) =>
    (
      await repositories.inTransaction('fixture', (write) =>
        repositories.projects.create(tenantId, { name, description: '' }, write),
      )
    ).value.project_id;
  [longProject, shortProject] = [await project('long'), await project('short')];
  await knex('tasks').insert(
    taskRows(longProject, 30).map((row) => ({ ...row, description: 'x'.repeat(10_000) })),
  );
  await knex('tasks').insert(taskRows(shortProject, 30));
}, 60_000);
afterAll(async () => {
  await knex?.destroy();
  await database?.drop();
});

const list = (projectId: string) =>
  repositories.tasks.listForProject(tenantId, projectId, { sort: 'created_at', limit: 200 });

/** The most page reads (of the tasks table) the database was running at once while `work` ran. */
async function mostReadsAtOnce(work: () => Promise<unknown>): Promise<number> {
  let running = 0;
  let most = 0;
  const started = (q: { sql: string }) =>
    /\bfrom [`"]tasks[`"]/i.test(q.sql) && (most = Math.max(most, ++running));
  const ended = (_response: unknown, q: { sql: string }) =>
    /\bfrom [`"]tasks[`"]/i.test(q.sql) && running--;
  knex.on('query', started).on('query-response', ended);
  try {
    await work();
  } finally {
    knex.off('query', started).off('query-response', ended);
  }
  return most;
}

it('builds pages of long rows one per turn of the event loop', async () => {
  // Counts turns: its callback runs first in each turn's check phase, as it was set before any page's.
  let turn = 0;
  let probe = setImmediate(function count() {
    turn++;
    probe = setImmediate(count);
  });
  try {
    const turns = await Promise.all(
      Array.from({ length: 6 }, () =>
        list(longProject).then((page) => (expect(page?.data).toHaveLength(30), turn)),
      ),
    );
    expect(new Set(turns).size).toBe(6);
  } finally {
    clearImmediate(probe);
  }
});

it('reads pages of long rows two at a time, and short pages as many at once as the pool allows', async () => {
  await list(longProject);
  expect(
    await mostReadsAtOnce(() => Promise.all(Array.from({ length: 8 }, () => list(longProject)))),
  ).toBeLessThanOrEqual(2);
  await list(shortProject);
  const short = await mostReadsAtOnce(() =>
    Promise.all(Array.from({ length: 8 }, () => list(shortProject))),
  );
  // SQLite's pool has one connection.
  if (testEngine === 'mysql') expect(short).toBeGreaterThan(2);
});
