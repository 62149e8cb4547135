/**
 * The client kit's follower with two service instances on one MariaDB database: 200 concurrent
 * writers through both, and a follower on one of them, which a consumer stops and resumes from its
 * stored cursor along the way: every event once, in sequence order, none missed.
 */
import { createClient, type FollowedEvent } from '../../clients/typescript/src';
import { startService, type RunningService } from '../../src/server';
import { seedTenant } from '../support/keyed-creates';
import { testConfig } from '../support/test-config';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let database: TestDatabase;
let instances: RunningService[];
let key: string;
let projectId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ key, projectId } = await seedTenant(database.config));
  instances = [
    await startService(testConfig(database.config)),
    await startService(testConfig(database.config)),
  ];
}, 60_000);
afterAll(async () => {
  for (const instance of instances ?? []) await instance.stop();
  await database?.drop();
});

it('yields every event of 200 writers on two instances once, in order, across a stop and resume', async () => {
  const writers = instances.map((instance) => createClient({ baseUrl: instance.url, apiKey: key }));
  const follower = createClient({ baseUrl: instances[0].url, apiKey: key });
  const writes = Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      writers[i % 2].tasks.create({ project_id: projectId, title: `w${i}` }),
    ),
  );
  const seen: FollowedEvent[] = [];
  let cursor = 'oldest';
  const deadline = Date.now() + 30_000;
  // The consumer stops after every 37 events and resumes from the cursor it stored.
  while (seen.length < 201 && Date.now() < deadline) {
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), 3000);
    let taken = 0;
    for await (const event of follower.events.follow({
      from: cursor,
      waitSeconds: 2,
      signal: stop.signal,
    })) {
      seen.push(event);
      cursor = event.cursor;
      if (++taken === 37) break;
    }
    clearTimeout(timer);
  }
  await writes;
  expect(seen.map((event) => event.sequence)).toEqual(Array.from({ length: 201 }, (_, i) => i + 1));
  expect(new Set(seen.map((event) => event.event_id)).size).toBe(201);
}, 60_000);
