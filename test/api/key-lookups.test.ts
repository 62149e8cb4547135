/**
 * Keys asked for together are looked up together: many requests at once (a wake-up of long polls
 * asks again all at once) cost a few reads of api_keys, not one each, and every request still
 * gets its own key's tenant and scopes, and a key revoked before a request is refused.
 */
import { generateApiKey, hashApiKey } from '../../src/api-key-format';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let keyReads = 0;

beforeAll(async () => {
  api = await startTestService();
  api.service.knex.on('query', (query: { sql: string }) => {
    // The lookups of keys by their hash (not the reads of keys created lately, which the known-keys set makes).
    if (
      /^select/i.test(query.sql.trimStart()) &&
      query.sql.includes('api_keys') &&
      /key_hash[`"]? (= \?|in \()/i.test(query.sql)
    )
      keyReads++;
  });
});
afterAll(() => api.stop());

const json = { 'Content-Type': 'application/json' };

it('answers 120 requests of 12 tenants at once with their own data, in a few reads of the keys', async () => {
  const tenants = await Promise.all(
    Array.from({ length: 12 }, async (_, i) => {
      const writer = await api.createKey(`lookups-${i}`);
      const reader = await api.createKey(`lookups-${i}`, ['read']);
      const created = await api.send('POST', '/v1/projects', {
        key: writer,
        headers: json,
        body: JSON.stringify({ name: `own-${i}` }),
      });
      expect(created.status).toBe(201);
      return { i, writer, reader };
    }),
  );
  const revoked = await api.createKey('lookups-revoked');
  await api.service
    .knex('api_keys')
    .where('key_hash', hashApiKey(revoked))
    .update({ revoked_at: '2026-01-01 00:00:00.000' });
  const unknown = generateApiKey();

  const asks = tenants.flatMap((tenant) =>
    Array.from({ length: 10 }, (_, n) => ({
      tenant,
      key: n % 2 === 0 ? tenant.writer : tenant.reader,
    })),
  );
  // Once to open the connections, which then carry the requests that count together, as a
  // wake-up's long polls ask again on theirs.
  await Promise.all(asks.map(({ key }) => api.send('GET', '/v1/projects', { key })));
  const before = keyReads;
  const [answers, refusedRevoked, refusedUnknown, readerWrites] = await Promise.all([
    Promise.all(asks.map(({ key }) => api.send('GET', '/v1/projects', { key }))),
    api.send('GET', '/v1/projects', { key: revoked }),
    api.send('GET', '/v1/projects', { key: unknown }),
    // A read-only key asked for among the others keeps its scopes.
    api.send('POST', '/v1/projects', {
      key: tenants[3].reader,
      headers: json,
      body: '{"name":"x"}',
    }),
  ]);
  const reads = keyReads - before;

  answers.forEach((answer, n) => {
    expect([n, answer.status, answer.json.data.map((p: { name: string }) => p.name)]).toEqual([
      n,
      200,
      [`own-${asks[n].tenant.i}`],
    ]);
  });
  expect([refusedRevoked.status, refusedUnknown.status, readerWrites.status]).toEqual([
    401, 401, 403,
  ]);
  // One a request would be 123.
  expect(reads).toBeLessThanOrEqual(40);
});

it('refuses a key revoked a moment before, though lookups of it were running when it was revoked', async () => {
  const key = await api.createKey('lookups-revoke-race');
  const running = Array.from({ length: 20 }, () => api.send('GET', '/v1/projects', { key }));
  await api.service
    .knex('api_keys')
    .where('key_hash', hashApiKey(key))
    .update({ revoked_at: '2026-01-01 00:00:00.000' });
  const after = await Promise.all(
    Array.from({ length: 20 }, () => api.send('GET', '/v1/projects', { key })),
  );
  await Promise.all(running);
  expect(after.map((answer) => answer.status)).toEqual(Array(20).fill(401));
});
