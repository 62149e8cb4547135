/** FairLimiter: at most `limit` at once and `perKey` of one key, keys taking turns; a waiter that aborts leaves. */
import { FairLimiter } from '../../src/webhooks/fair-limiter';

const settle = () => new Promise((resolve) => setImmediate(resolve));

it("holds one key to its own cap, and lets another key's waiters past it", async () => {
  const limiter = new FairLimiter(4, 2);
  const started: string[] = [];
  const releases: Array<() => void> = [];
  const take = (key: string) =>
    void limiter.acquire(key).then((release) => {
      started.push(key);
      releases.push(release);
    });
  for (let i = 0; i < 5; i++) take('hostile');
  take('other');
  await settle();
  expect(started).toEqual(['hostile', 'hostile', 'other']);
  expect(limiter.active).toBe(3);
  releases[0]();
  await settle();
  expect(started).toEqual(['hostile', 'hostile', 'other', 'hostile']);
});

it('takes keys in turn within the instance cap, and forgets a waiter whose signal aborts', async () => {
  const limiter = new FairLimiter(1);
  const first = await limiter.acquire('a');
  const order: string[] = [];
  const aborted = new AbortController();
  const waiting = [
    limiter.acquire('a').then((release) => (order.push('a'), release)),
    limiter.acquire('a', aborted.signal).catch(() => order.push('a aborted')),
    limiter.acquire('b').then((release) => (order.push('b'), release)),
  ];
  aborted.abort();
  first();
  const [releaseA] = (await Promise.all([waiting[0]])) as Array<() => void>;
  releaseA();
  await waiting[2];
  expect(order).toEqual(['a aborted', 'a', 'b']);
});
