/**
 * The client kit against a create whose Idempotency-Key another request still holds: the service
 * answers 409 idempotency-in-progress, the client waits and sends the same key again, and once the
 * holder is gone the retry makes the project, once.
 */
import { createClient } from '../../clients/typescript/src';
import { holdIdempotencyKey } from '../support/held-idempotency-key';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let key: string;

beforeAll(async () => {
  api = await startTestService();
  key = await api.createKey('acme');
});
afterAll(() => api.stop());

it('retries a create answered 409 in progress with the same key, and succeeds once the holder is gone', async () => {
  const holder = await holdIdempotencyKey(api.service.knex, 'acme', 'held-by-another');
  const statuses: number[] = [];
  const client = createClient({
    baseUrl: api.baseUrl,
    apiKey: key,
    retry: { baseDelayMs: 200, maxDelayMs: 500 },
    fetch: async (request) => {
      const response = await fetch(request);
      statuses.push(response.status);
      return response;
    },
  });
  const created = client.projects.create({ name: 'held' }, { idempotencyKey: 'held-by-another' });
  // The first attempt waits for the holder and is answered 409; then the holder goes.
  while (!statuses.includes(409)) await new Promise((resolve) => setTimeout(resolve, 100));
  await holder.query('ROLLBACK');
  await holder.end();
  const project = await created;
  expect(statuses[0]).toBe(409);
  expect(statuses[statuses.length - 1]).toBe(201);
  expect(await api.service.knex('projects').where('name', 'held').pluck('project_id')).toEqual([
    project.project_id,
  ]);
}, 30_000);
