/**
 * While a first request with a key is really running (its transaction holds the key), a retry
 * waits and then answers 409; once that request is gone (rolled back, or its connection lost as
 * when its process dies), a retry runs at once.
 */
import { holdIdempotencyKey } from '../support/held-idempotency-key';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let key: string;

beforeAll(async () => {
  api = await startTestService();
  key = await api.createKey('acme');
});
afterAll(() => api.stop());

const create = (idempotencyKey: string) =>
  api.send('POST', '/v1/projects', {
    key,
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': idempotencyKey },
    body: JSON.stringify({ name: idempotencyKey }),
  });

const holdKey = (idempotencyKey: string) =>
  holdIdempotencyKey(api.service.knex, 'acme', idempotencyKey);

it('answers 409 while the first request holds the key, after waiting for it', async () => {
  const holder = await holdKey('held-1');
  try {
    const started = Date.now();
    const busy = await create('held-1');
    expect(busy.status).toBe(409);
    expect(busy.json.type).toBe('/problems/idempotency-in-progress');
    expect(Date.now() - started).toBeGreaterThan(3000);
  } finally {
    await holder.query('ROLLBACK');
    await holder.end();
  }
  const retried = await create('held-1');
  expect(retried.status).toBe(201);
  expect(retried.headers.get('idempotent-replayed')).toBeNull();
}, 30_000);

it('runs a retry at once when the first request died with its connection', async () => {
  const holder = await holdKey('held-2');
  const waiting = create('held-2');
  await new Promise((resolve) => setTimeout(resolve, 500));
  holder.destroy();
  const answer = await waiting;
  expect(answer.status).toBe(201);
  expect(answer.headers.get('idempotent-replayed')).toBeNull();
  expect(
    Number((await api.service.knex('projects').where('name', 'held-2').count({ n: '*' }))[0].n),
  ).toBe(1);
}, 30_000);
