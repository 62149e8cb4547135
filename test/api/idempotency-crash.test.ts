/**
 * The service killed with SIGKILL under a load of creates that each carry their own
 * Idempotency-Key, then started again: a retry of every key finds exactly one task per key, and
 * every task acknowledged before the kill is the one its retry replays.
 */
import { createKnex } from '../../src/db/knex';
import {
  retryEveryKey,
  seedTenant,
  startKeyedCreates,
  taskIdsByTitle,
} from '../support/keyed-creates';
import { killHard, serveProcess } from '../support/service-process';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let database: TestDatabase;
let key: string;
let projectId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ key, projectId } = await seedTenant(database.config));
});
afterAll(() => database.drop());

it('binds each key to one task across a SIGKILL of the service', async () => {
  const first = await serveProcess(database.config);
  const load = startKeyedCreates(first.url, key, projectId, 20);
  // The kill comes once the load is well under way, however busy the machine.
  const acknowledgedBeforeKill = () => load.creates.filter((c) => c.acknowledged).length;
  const deadline = Date.now() + 60_000;
  while (acknowledgedBeforeKill() <= 20 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  await killHard(first.child);
  await load.stop();

  const second = await serveProcess(database.config);
  try {
    const retried = await retryEveryKey(second.url, key, projectId, load.creates);
    const acknowledged = load.creates.filter((c) => c.acknowledged !== undefined);
    expect(acknowledged.length).toBeGreaterThan(20);
    // Requests cut off by the kill: their outcome was unknown to the client.
    expect(load.creates.length).toBeGreaterThan(acknowledged.length);
    for (const create of acknowledged)
      expect([create.key, retried.get(create.key)]).toEqual([
        create.key,
        { taskId: create.acknowledged, replayed: true },
      ]);

    const knex = createKnex(database.config);
    try {
      const stored = await taskIdsByTitle(
        knex,
        load.creates.map((c) => c.key),
      );
      const notOnce = load.creates
        .filter((c) => stored.get(c.key)?.length !== 1)
        .map((c) => [c.key, stored.get(c.key)]);
      expect(notOnce).toEqual([]);
      for (const create of load.creates)
        expect(stored.get(create.key)).toEqual([retried.get(create.key)!.taskId]);
    } finally {
      await knex.destroy();
    }
  } finally {
    await killHard(second.child);
  }
}, 120_000);
