/**
 * A tenant's shared read of its events that fails (here the table cannot be read, on MariaDB) is
 * tried again at the watcher's next look, not straight away in a loop.
 */
import { capturedLog } from '../support/captured-log';
import { startTestService, type RawResponse, type TestService } from '../support/test-service';

let api: TestService;
// The shared read runs on the background jobs' pool: its tries are counted by what it logs of each failure.
const log = capturedLog();
const failedRead = 'reading the event feed for waiting polls failed; trying again at the next look';

beforeAll(async () => {
  api = await startTestService({ config: { logLevel: 'warn' }, logDestination: log.stream });
});
afterAll(() => api.stop());

const feed = (key: string, query = '') => api.send('GET', `/v1/events${query}`, { key });
const endCursor = async (key: string): Promise<string> => (await feed(key)).json.next_cursor;
const createProject = async (key: string, name: string) =>
  (await api.client(key).POST('/v1/projects', { body: { name } })).data!;

function polls(key: string, query: string, count: number) {
  return Array.from({ length: count }, () => {
    const poll = { answer: undefined as RawResponse | undefined, done: feed(key, query) };
    void poll.done.then((answer) => (poll.answer = answer));
    return poll;
  });
}

it("tries a failed shared read again at the watcher's next look, not at once in a loop", async () => {
  const key = await api.createKey('outage');
  await createProject(key, 'first');
  for (
    const deadline = Date.now() + 5000;
    (await feed(key, '?limit=200')).json.data.length < 1 && Date.now() < deadline;
  )
    await new Promise((resolve) => setTimeout(resolve, 50));
  const cursor = await endCursor(key);
  const { tenant_id: tenantId } = await api.service.knex('tenants').where('name', 'outage').first();
  const waiting = polls(key, `?cursor=${cursor}&wait=4`, 3);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  // The events cannot be read, while the tenant's last sequence says there is a new one.
  await api.service.knex.schema.renameTable('events', 'events_away');
  const before = log.withMessage(failedRead).length;
  let tries: number;
  try {
    await api.service
      .knex('event_sequences')
      .where('tenant_id', tenantId)
      .increment('last_sequence', 1);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    // The log's lines go out in batches at least every 100 ms.
    await new Promise((resolve) => setTimeout(resolve, 300));
    tries = log.withMessage(failedRead).length - before;
  } finally {
    await api.service
      .knex('event_sequences')
      .where('tenant_id', tenantId)
      .decrement('last_sequence', 1);
    await api.service.knex.schema.renameTable('events_away', 'events');
  }
  // One try a look (every 100 ms): a loop would have made thousands.
  expect(tries).toBeGreaterThan(0);
  expect(tries).toBeLessThanOrEqual(25);
  expect(
    (await Promise.all(waiting.map((poll) => poll.done))).every((answer) => answer.status === 200),
  ).toBe(true);
});
