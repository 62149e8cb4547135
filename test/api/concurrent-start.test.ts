/**
 * Instances started at once on a new database all start: one takes the migration lock and
 * migrates, the others wait for it and find the schema done, rather than exit.
 */
import { startService, type RunningService } from '../../src/server';
import { testConfig } from '../support/test-config';
import { createTestDatabase } from '../support/test-database';

it('starts three instances at once on a new database', async () => {
  const database = await createTestDatabase();
  const started = await Promise.allSettled(
    [0, 1, 2].map(() => startService(testConfig(database.config))),
  );
  try {
    expect(started.map((s) => (s.status === 'fulfilled' ? 'started' : String(s.reason)))).toEqual([
      'started',
      'started',
      'started',
    ]);
    for (const service of started)
      expect(
        (await fetch(`${(service as PromiseFulfilledResult<RunningService>).value.url}/readyz`))
          .status,
      ).toBe(200);
  } finally {
    for (const service of started) if (service.status === 'fulfilled') await service.value.stop();
    await database.drop();
  }
}, 60_000);
