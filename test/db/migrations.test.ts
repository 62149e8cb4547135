import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import { nowForDb } from '../../src/db/timestamps';
import { migrateToLatest } from '../../src/db/migrate';
import { createMigratedDatabase, testEngine } from '../support/test-database';

let database: Awaited<ReturnType<typeof createMigratedDatabase>>;
let knex: Knex;

beforeAll(async () => {
  database = await createMigratedDatabase();
  knex = database.knex;
});
afterAll(() => database.close());

const tables = [
  'tenants',
  'api_keys',
  'projects',
  'tasks',
  'idempotency_keys',
  'events',
  'event_sequences',
  'leases',
  'webhook_endpoints',
  'webhook_deliveries',
  'webhook_endpoint_counts',
];

it('creates every table, and rolls all the way back and forward again', async () => {
  for (const table of tables) expect(await knex.schema.hasTable(table)).toBe(true);
  await knex.migrate.rollback(undefined, true);
  for (const table of tables) expect(await knex.schema.hasTable(table)).toBe(false);
  await migrateToLatest(knex);
  for (const table of tables) expect(await knex.schema.hasTable(table)).toBe(true);
  const [, pending] = await knex.migrate.list();
  expect(pending).toEqual([]);
});

it('keeps the project and task lists on indexes that start with their scope', async () => {
  const indexed = async (table: string): Promise<string[][]> => {
    if (testEngine === 'mysql') {
      const [rows] = await knex.raw(
        'SELECT index_name, column_name FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? ORDER BY index_name, seq_in_index',
        [table],
      );
      const byIndex = new Map<string, string[]>();
      for (const row of rows as Array<{
        index_name?: string;
        INDEX_NAME?: string;
        column_name?: string;
        COLUMN_NAME?: string;
      }>) {
        const name = (row.index_name ?? row.INDEX_NAME)!;
        byIndex.set(name, [...(byIndex.get(name) ?? []), (row.column_name ?? row.COLUMN_NAME)!]);
      }
      return [...byIndex.values()];
    }
    const list: Array<{ name: string }> = await knex.raw(`PRAGMA index_list(${table})`);
    return Promise.all(
      list.map(async ({ name }) =>
        ((await knex.raw(`PRAGMA index_info(${name})`)) as Array<{ name: string }>).map(
          (c) => c.name,
        ),
      ),
    );
  };
  expect(await indexed('projects')).toContainEqual(['tenant_id', 'created_at', 'project_id']);
  const taskIndexes = await indexed('tasks');
  for (const columns of [
    ['project_id', 'created_at', 'task_id'],
    ['project_id', 'updated_at', 'task_id'],
    ['project_id', 'status', 'created_at', 'task_id'],
    ['project_id', 'status', 'updated_at', 'task_id'],
  ]) {
    expect(taskIndexes).toContainEqual(columns);
  }
});

if (testEngine === 'mysql') {
  it('creates the MySQL tables in utf8mb4 with a byte-exact collation', async () => {
    const [rows] = await knex.raw(
      'SELECT table_name AS t, table_collation AS c FROM information_schema.tables WHERE table_schema = DATABASE()',
    );
    const collations = Object.fromEntries(
      (rows as Array<{ t: string; c: string }>).map((r) => [r.t, r.c]),
    );
    for (const table of tables) expect([table, collations[table]]).toEqual([table, 'utf8mb4_bin']);
  });
} else {
  it('runs SQLite in WAL mode with synchronous=FULL, so an acknowledged commit survives a power loss', async () => {
    expect(await knex.raw('PRAGMA journal_mode')).toEqual([{ journal_mode: 'wal' }]);
    expect(await knex.raw('PRAGMA synchronous')).toEqual([{ synchronous: 2 }]);
    expect(await knex.raw('PRAGMA foreign_keys')).toEqual([{ foreign_keys: 1 }]);
  });
}

it('counts the webhook endpoints each tenant had before counting began, none for a tenant without', async () => {
  const counting = '20261126120100-count-webhook-endpoints';
  await knex.migrate.down({ name: counting });
  const now = nowForDb();
  const tenants = [uuidv7(), uuidv7(), uuidv7()];
  await knex('tenants').insert(
    tenants.map((tenant_id, i) => ({ tenant_id, name: `counted-${i}`, created_at: now })),
  );
  const endpoint = (tenant_id: string) => ({
    webhook_endpoint_id: uuidv7(),
    tenant_id,
    url: 'https://hooks.example.com/x',
    event_types: null,
    description: '',
    enabled: false,
    disabled_reason: 'by_client',
    secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
    created_at: now,
    updated_at: now,
  });
  await knex('webhook_endpoints').insert([
    endpoint(tenants[0]),
    endpoint(tenants[0]),
    endpoint(tenants[0]),
    endpoint(tenants[1]),
  ]);
  await knex.migrate.up({ name: counting });
  const counts = await knex('webhook_endpoint_counts')
    .whereIn('tenant_id', tenants)
    .select('tenant_id', 'endpoints');
  expect(counts.sort((a, b) => a.endpoints - b.endpoints)).toEqual([
    { tenant_id: tenants[2], endpoints: 0 },
    { tenant_id: tenants[1], endpoints: 1 },
    { tenant_id: tenants[0], endpoints: 3 },
  ]);
});
