/**
 * The delivery worker's scheduling, against an in-memory queue and sender, on fake timers: what it
 * claims and starts, within which caps, in what order, what it writes back, and how it stops.
 * No database, no HTTP.
 */
import {
  startDeliveryWorker,
  type DeliveryWorker,
  type DeliveryWorkerOptions,
} from '../../src/webhooks/delivery-worker';
import { initialWindow } from '../../src/webhooks/delivery-slots';
import { FakeQueue, FakeSender, fakeLogger, fakeMetrics, type Request } from './fakes';

let worker: DeliveryWorker | undefined;

beforeEach(() => jest.useFakeTimers({ now: Date.parse('2026-11-27T12:00:00.000Z') }));
afterEach(async () => {
  if (worker) await stopped(worker);
  worker = undefined;
  jest.useRealTimers();
});

/** Runs the fake clock a millisecond at a time until `condition` holds. */
async function until(condition: () => boolean, limitMs = 10_000): Promise<void> {
  for (let ms = 0; !condition(); ms++) {
    if (ms > limitMs) throw new Error(`not so within ${limitMs} ms: ${condition.toString()}`);
    await jest.advanceTimersByTimeAsync(1);
  }
}

/** Runs the fake clock for `ms`. */
const pass = (ms: number) => jest.advanceTimersByTimeAsync(ms);

async function stopped(running: DeliveryWorker): Promise<void> {
  let done = false;
  const stopping = running.stop().then(() => (done = true));
  await until(() => done);
  await stopping;
}

/**
 * Starts a worker. Its tenants may hold their shares from the first attempt: most tests here hold
 * slots with receivers that never answer, to count them, where the worker's own default would
 * give such a tenant two (the tests of `initialWindow` use that default).
 */
function start(queue: FakeQueue, sender: FakeSender, options: Partial<DeliveryWorkerOptions> = {}) {
  const { metrics, counts } = fakeMetrics();
  const { logger, lines } = fakeLogger();
  worker = startDeliveryWorker(
    { queue, sender },
    {
      logger,
      metrics,
      timeoutMs: 1000,
      retryScheduleMs: [1000],
      maxInFlight: 16,
      firstSlotsPerTenant: 1000,
      ...options,
    },
  );
  return { worker, counts, lines };
}

/** Answers the open requests `pick` chooses, one at a time, until there are none. */
async function answerAll(
  sender: FakeSender,
  queue: FakeQueue,
  pick: (open: Request[]) => Request[] = (open) => open.slice(0, 3),
): Promise<void> {
  await until(() => {
    for (const request of pick(sender.open())) request.answer({ status: 204 });
    return queue.pending().length === 0;
  });
}

it('makes every due attempt once and writes one outcome for each', async () => {
  const queue = new FakeQueue();
  for (const [tenant, endpoint] of [
    ['t1', 'a'],
    ['t1', 'b'],
    ['t2', 'c'],
  ]) {
    queue.endpoint(tenant, endpoint);
    queue.plan(endpoint, 30);
  }
  const sender = new FakeSender();
  const { counts } = start(queue, sender);
  await until(() => queue.pending().length === 0);
  const planned = queue.rows.map((row) => row.eventId).sort();
  expect(sender.requests.map((request) => request.webhookId).sort()).toEqual(planned);
  expect(queue.outcomes.map((outcome) => outcome.deliveryId).sort()).toEqual(
    queue.rows.map((row) => row.deliveryId).sort(),
  );
  expect(queue.outcomes.every((outcome) => outcome.succeeded)).toBe(true);
  expect(counts.attempted.get('delivered')).toBe(90);
  await until(() => counts.inFlight === 0);
  // Successes are written many at a time: those that end within 10 ms of the first share its
  // write (the 90 here end together on the fake clock; written as they came, they took 13).
  expect(queue.called('recordSuccesses').length).toBeLessThanOrEqual(2);
});

it('never holds more than its slots, nor more than 10 to one endpoint, and uses them all', async () => {
  const queue = new FakeQueue();
  for (const [tenant, endpoint] of [
    ['t1', 'a'],
    ['t1', 'b'],
    ['t1', 'c'],
    ['t2', 'd'],
    ['t2', 'e'],
  ]) {
    queue.endpoint(tenant, endpoint);
    queue.plan(endpoint, 40);
  }
  const sender = new FakeSender(() => undefined);
  const { counts } = start(queue, sender, { maxInFlight: 16 });
  await until(() => sender.open().length === 16);
  await pass(50);
  expect(sender.open()).toHaveLength(16);
  // Answered a few at a time, the oldest first: the slots are topped up as they free.
  await answerAll(sender, queue);
  expect(sender.maxOpen).toBe(16);
  expect(counts.maxInFlight).toBe(16);
  for (const endpoint of ['a', 'b', 'c', 'd', 'e'])
    expect(sender.maxOpenByEndpoint.get(endpoint)).toBeLessThanOrEqual(10);
  expect(sender.requests).toHaveLength(200);
});

it('claims more for an endpoint whose attempts all ended before the claim, without waiting for the poll', async () => {
  const queue = new FakeQueue();
  queue.endpoint('t1', 'a');
  queue.plan('a', 200);
  // Answered at once: an endpoint's attempts in flight end before the claim that tops it up.
  const sender = new FakeSender();
  start(queue, sender, { maxInFlight: 64 });
  // The poll comes every 200 ms; each claim takes at most 20.
  await until(() => queue.pending().length === 0, 190);
  expect(sender.requests).toHaveLength(200);
});

it('holds at most 10 attempts in flight to one endpoint, whatever the slots', async () => {
  const queue = new FakeQueue();
  queue.endpoint('t1', 'a');
  queue.plan('a', 50);
  const sender = new FakeSender(() => undefined);
  start(queue, sender, { maxInFlight: 64 });
  await until(() => sender.open().length === 10);
  await pass(300);
  expect(sender.open()).toHaveLength(10);
  await answerAll(sender, queue, (open) => open.slice(0, 1));
  expect(sender.maxOpenByEndpoint.get('a')).toBe(10);
});

it("shares a tenant's slots between its endpoints: one's backlog does not hold back another", async () => {
  const queue = new FakeQueue();
  queue.endpoint('t1', 'a');
  queue.endpoint('t1', 'b');
  queue.plan('a', 100);
  const sender = new FakeSender(() => undefined);
  start(queue, sender, { maxInFlight: 8 });
  // A tenant alone holds all but an eighth of the slots.
  await until(() => sender.open('a').length === 7);
  queue.plan('b', 3);
  worker!.poke();
  // Each attempt of a that ends frees a slot, which the endpoints take in turns (a has more
  // claimed ahead, so b gets every other one once its claim is in).
  for (let answered = 0; sender.open('b').length + countAnswered(sender, 'b') < 3; answered++) {
    expect(answered).toBeLessThan(10);
    sender.open('a')[0].answer({ status: 200 });
    await pass(10);
  }
  expect(queue.pending('a').length).toBeGreaterThan(80);
});

const countAnswered = (sender: FakeSender, endpointId: string) =>
  sender.requests.filter((request) => request.endpointId === endpointId && request.answered).length;

it("keeps slots for another tenant while one tenant's receivers hang, and gives it a fair share", async () => {
  const queue = new FakeQueue();
  queue.endpoint('t1', 'a');
  queue.endpoint('t1', 'b');
  queue.endpoint('t2', 'c');
  queue.plan('a', 50);
  queue.plan('b', 50);
  const sender = new FakeSender(() => undefined);
  start(queue, sender, { maxInFlight: 16 });
  await until(() => sender.open().length === 14);
  await pass(300);
  expect(sender.open()).toHaveLength(14);
  queue.plan('c', 5);
  worker!.poke();
  // The two slots left free start the other tenant's attempts at once.
  await until(() => sender.open('c').length === 2);
  // While both want slots, each tenant's share is 8: the slots t1 frees go to t2 first.
  for (let i = 0; i < 3; i++) {
    sender.open('a').concat(sender.open('b'))[0].answer({ status: 200 });
    await pass(10);
  }
  expect(sender.open('c')).toHaveLength(5);
  expect(sender.open('a').length + sender.open('b').length).toBe(11);
});

it("gives a tenant's hanging receivers two slots, not the share it had alone, while another tenant's grow as they answer", async () => {
  const queue = new FakeQueue();
  for (const endpoint of ['h1', 'h2', 'h3']) {
    queue.endpoint('hostile', endpoint);
    queue.plan(endpoint, 30);
  }
  queue.endpoint('other', 'fast');
  const sender = new FakeSender((request) =>
    request.endpointId === 'fast' ? { status: 204 } : undefined,
  );
  start(queue, sender, { maxInFlight: 16, firstSlotsPerTenant: undefined });
  // Alone, the hostile tenant's share is 14 of 16; none of its attempts has ended, so it holds 2.
  await until(() => sender.open().length === 2);
  await pass(500);
  expect(sender.open()).toHaveLength(2);
  expect(initialWindow).toBe(2);
  // The other tenant's receivers answer at once: its attempts all go, without waiting for the
  // hanging ones, and the hostile tenant's slots stay two.
  queue.plan('fast', 40);
  worker!.poke();
  await until(() => queue.pending().every((row) => row.endpointId !== 'fast'), 2000);
  expect(sender.requests.filter((request) => request.endpointId === 'fast')).toHaveLength(40);
  expect(sender.open()).toHaveLength(2);
});

it("adds a slot for each attempt that ends before the timeout and halves a tenant's slots at each cut off by it", async () => {
  const queue = new FakeQueue();
  queue.endpoint('t1', 'a');
  queue.plan('a', 60);
  const sender = new FakeSender(() => undefined);
  start(queue, sender, { maxInFlight: 16, timeoutMs: 1000, firstSlotsPerTenant: undefined });
  await until(() => sender.open().length === 2);
  // Four answers at once: 2 + 4 slots.
  for (let i = 0; i < 4; i++) {
    sender.open()[0].answer({ status: 204 });
    await pass(5);
  }
  await until(() => sender.open().length === 6);
  await pass(50);
  expect(sender.open()).toHaveLength(6);
  // The six are cut off by the timeout, one after the other: 6 → 3 → 2 (never below two).
  await pass(1000);
  for (let i = 0; i < 6; i++) {
    sender.open()[0].answer({ error: 'timeout' });
    await pass(5);
  }
  await pass(50);
  expect(sender.open()).toHaveLength(2);
});

it("starts a tenant's other endpoints at once while its hanging endpoint's attempts are cut off and its slots halve", async () => {
  const queue = new FakeQueue();
  queue.endpoint('t1', 'hangs');
  queue.endpoint('t1', 'prompt');
  queue.plan('hangs', 30);
  const sender = new FakeSender((request) =>
    request.endpointId === 'prompt' ? { status: 204 } : undefined,
  );
  start(queue, sender, { maxInFlight: 16, timeoutMs: 1000, firstSlotsPerTenant: undefined });
  // A change every 150 ms for 2.25 s: prompt's answers grow the tenant's slots, which hangs takes
  // whole while prompt has nothing waiting, until its attempts are cut off at 1 s and the slots
  // halve below what it holds. Either way it holds what prompt's next attempt would wait for.
  let halved = false;
  for (let change = 0; change < 15; change++) {
    queue.plan('prompt', 1);
    worker!.poke();
    for (let ms = 0; ms < 150; ms++) {
      for (const request of sender.open('hangs'))
        if (Date.now() - request.at >= 1000) {
          request.answer({ error: 'timeout' });
          halved = true;
        }
      await pass(1);
    }
    // Each change reached prompt within its 150 ms, however many slots hangs held.
    expect([change, countAnswered(sender, 'prompt')]).toEqual([change, change + 1]);
  }
  expect(halved).toBe(true);
  expect(sender.maxOpenByEndpoint.get('hangs')).toBeLessThanOrEqual(10);
});

it('writes a failed attempt with its retry, and makes the retry when it comes due', async () => {
  const queue = new FakeQueue();
  queue.endpoint('t1', 'a');
  const [planned] = queue.plan('a', 1);
  const sender: FakeSender = new FakeSender((request) =>
    sender.requests.indexOf(request) === 0 ? { status: 503 } : { status: 200 },
  );
  const { counts } = start(queue, sender, { retryScheduleMs: [60_000] });
  await until(() => queue.outcomes.length === 1);
  const [failed] = queue.called('recordOutcome');
  const outcome = queue.outcomes[0].outcome!;
  expect(outcome).toMatchObject({ succeeded: false, responseStatus: 503 });
  // The schedule's wait, moved by up to a fifth either way.
  const wait = outcome.retryAt!.getTime() - failed.at;
  expect(wait).toBeGreaterThanOrEqual(48_000);
  expect(wait).toBeLessThanOrEqual(72_000);
  const retry = queue.rows.find((row) => row.attempt === 2)!;
  expect(retry).toMatchObject({ eventId: planned.eventId, status: 'pending' });
  await pass(wait - 1000);
  expect(sender.requests).toHaveLength(1);
  await until(() => retry.status === 'succeeded', 2000);
  expect(sender.requests.map((request) => request.webhookId)).toEqual([
    planned.eventId,
    planned.eventId,
  ]);
  expect(counts.attempted.get('failed')).toBe(1);
  expect(counts.attempted.get('delivered')).toBe(1);
});

it('stops sending to an endpoint that answers 410, and gives back what it claimed ahead', async () => {
  const queue = new FakeQueue();
  queue.endpoint('t1', 'a');
  queue.plan('a', 40);
  const sender = new FakeSender(() => undefined);
  const { counts } = start(queue, sender, { maxInFlight: 16 });
  // Ten in flight (the endpoint's cap), the thirty others claimed ahead.
  await until(() => sender.open().length === 10);
  expect(queue.claimed()).toHaveLength(40);
  sender.open()[0].answer({ status: 410 });
  await until(() => counts.disabled.length === 1);
  expect(counts.disabled).toEqual(['gone']);
  // The slot it freed went to an attempt claimed ahead before the 410 was written; at the next
  // look the rest claimed ahead are given back, and nothing more is sent or claimed.
  await pass(300);
  expect(queue.claimed()).toHaveLength(10);
  for (const request of sender.open()) request.answer({ status: 410 });
  await pass(1000);
  expect(sender.requests).toHaveLength(11);
  expect(queue.claimed()).toEqual([]);
  expect(counts.disabled).toEqual(['gone']);
});

it('gives back what it claimed ahead for an endpoint disabled elsewhere, at the next look', async () => {
  const queue = new FakeQueue();
  queue.endpoint('t1', 'a');
  queue.plan('a', 40);
  const sender = new FakeSender(() => undefined);
  start(queue, sender, { maxInFlight: 16 });
  await until(() => sender.open().length === 10 && queue.claimed().length === 40);
  queue.endpointsById.get('a')!.enabled = false;
  await pass(250);
  expect(queue.claimed()).toHaveLength(10);
  for (const request of sender.open()) request.answer({ status: 200 });
  await pass(1000);
  expect(sender.requests).toHaveLength(10);
});

it("claims for many endpoints in one claim, each within its part of its tenant's share", async () => {
  const queue = new FakeQueue();
  const endpoints = Array.from({ length: 12 }, (_, i) => `e${String(i).padStart(2, '0')}`);
  endpoints.forEach((endpoint, i) => {
    queue.endpoint(`t${i % 3}`, endpoint);
    queue.plan(endpoint, 40);
  });
  const sender = new FakeSender(() => undefined);
  start(queue, sender, { maxInFlight: 15 });
  await until(() => queue.called('claim').length > 0);
  await pass(10);
  // One claim for all twelve: three tenants share 15 slots, 5 each, and claim ahead four times
  // that, 20 each, a quarter for each of their four endpoints.
  const claims = queue.called('claim');
  expect(claims).toHaveLength(1);
  const wanted = claims[0].args[0] as Map<string, number>;
  expect([...wanted.keys()].sort()).toEqual(endpoints);
  expect([...wanted.values()]).toEqual(endpoints.map(() => 5));
  expect(queue.claimed()).toHaveLength(60);
  expect(sender.open()).toHaveLength(15);
});

it('claims more for an endpoint as its attempts start, without waiting for the next look', async () => {
  const queue = new FakeQueue();
  queue.endpoint('t1', 'a');
  queue.plan('a', 100);
  // Each receiver takes 20 ms: ten at a time, 100 take 200 ms when the slots never wait for claims.
  const sender = new FakeSender(
    (request) => void setTimeout(() => request.answer({ status: 200 }), 20),
  );
  start(queue, sender, { maxInFlight: 16 });
  // A look every 200 ms, claiming 14 at a time, would take over a second.
  await until(() => queue.pending().length === 0, 400);
  expect(sender.requests).toHaveLength(100);
  expect(sender.maxOpenByEndpoint.get('a')).toBe(10);
});

it('tries a failed write of successes again until it lands, making each attempt once', async () => {
  const queue = new FakeQueue();
  queue.endpoint('t1', 'a');
  queue.plan('a', 5);
  queue.failures.set('recordSuccesses', 2);
  const sender = new FakeSender();
  start(queue, sender);
  await until(() => queue.pending().length === 0);
  expect(sender.requests).toHaveLength(5);
  expect(queue.called('recordSuccesses').length).toBeGreaterThanOrEqual(3);
  expect(queue.outcomes).toHaveLength(5);
});

it('gives back a claim whose answer was lost at the next look, rather than waiting out its lease', async () => {
  const queue = new FakeQueue();
  queue.endpoint('t1', 'a');
  queue.plan('a', 3);
  queue.loseClaimAnswers = 1;
  const sender = new FakeSender();
  const { lines } = start(queue, sender);
  await until(() => queue.pending().length === 0, 2000);
  expect(queue.called('releaseClaim')).toHaveLength(1);
  expect(sender.requests).toHaveLength(3);
  expect(lines.some((line) => line.msg.startsWith('claiming webhook deliveries failed'))).toBe(
    true,
  );
});

it('stops: looks no more, calls off what is in flight, gives every claim and endpoint back', async () => {
  const queue = new FakeQueue();
  queue.endpoint('t1', 'a');
  queue.endpoint('t2', 'b');
  queue.plan('a', 30);
  queue.plan('b', 30);
  const sender = new FakeSender(() => undefined);
  const { counts } = start(queue, sender, { maxInFlight: 8 });
  await until(() => sender.open().length === 8);
  // The next look claims ahead, up to four times each tenant's share of the slots.
  await pass(250);
  expect(queue.claimed()).toHaveLength(40);
  const stoppedAt = Date.now();
  await stopped(worker!);
  worker = undefined;
  expect(sender.open()).toEqual([]);
  expect(sender.closed).toBe(true);
  // Called off, not failed: no outcome, and every attempt is due again for any instance.
  expect(queue.outcomes).toEqual([]);
  expect(queue.claimed()).toEqual([]);
  expect(queue.pending()).toHaveLength(60);
  expect(counts.attempted.size).toBe(0);
  expect(counts.inFlight).toBe(0);
  expect((queue.called('releaseLeases')[0].args[0] as string[]).sort()).toEqual(['a', 'b']);
  await pass(1000);
  expect(queue.calls.filter((call) => call.at > stoppedAt && call.method === 'claim')).toEqual([]);
  expect(sender.requests).toHaveLength(8);
});

it('stops only once the outcomes being written are written', async () => {
  const queue = new FakeQueue();
  queue.endpoint('t1', 'a');
  queue.plan('a', 3);
  let open!: () => void;
  queue.successesGate = new Promise((resolve) => (open = resolve));
  const sender = new FakeSender();
  start(queue, sender);
  await until(() => queue.called('recordSuccesses').length > 0);
  let done = false;
  const stopping = worker!.stop().then(() => (done = true));
  worker = undefined;
  await pass(1000);
  expect(done).toBe(false);
  open();
  await until(() => done);
  await stopping;
  expect(queue.pending()).toEqual([]);
});

it("starts attempts only once their host is known: a tenant's slow lookups hold no slot, and others' attempts start meanwhile", async () => {
  const queue = new FakeQueue();
  for (const endpoint of ['slow1', 'slow2', 'slow3']) {
    queue.endpoint('hostile', endpoint);
    queue.plan(endpoint, 10);
  }
  queue.endpoint('other', 'fast');
  queue.plan('fast', 10);
  const sender = new FakeSender(() => undefined);
  for (const endpoint of ['slow1', 'slow2', 'slow3']) sender.unknown(`${endpoint}.example`);
  start(queue, sender, { maxInFlight: 8 });
  // The other tenant's attempts take their share (half of 8) while the hostile tenant's hosts are looked up, which take none.
  await until(() => sender.open('fast').length === 4);
  await pass(50);
  expect(sender.open()).toHaveLength(4);
  expect(sender.lookedUp.length).toBeGreaterThan(0);
  expect(sender.lookedUp.every((host) => host.startsWith('slow'))).toBe(true);
  await until(() => {
    for (const request of sender.open('fast')) request.answer({ status: 204 });
    return queue.pending().every((row) => row.endpointId !== 'fast');
  });
  expect(sender.open()).toHaveLength(0);
  // Each host was asked for once, however often the slots were filled while its lookup ran: each
  // asking again was one more waiter in its tenant's queue of lookups (issue 44).
  expect(sender.lookedUp.length).toBeGreaterThan(0);
  expect(new Set(sender.lookedUp).size).toBe(sender.lookedUp.length);
  // Once a host is known, its attempts start.
  const [known] = sender.lookedUp;
  sender.looked(known);
  await until(() => sender.open(known.replace('.example', '')).length > 0);
});

it('claims at once for an endpoint leased here that attempts were planned for, without a look at every endpoint', async () => {
  const queue = new FakeQueue();
  queue.endpoint('t1', 'a');
  queue.endpoint('t1', 'b');
  queue.plan('a', 30);
  const sender = new FakeSender(() => undefined);
  start(queue, sender, { maxInFlight: 8 });
  await until(() => sender.open('a').length === 7);
  const looks = () => queue.called('endpointsWithDueAttempts').length;
  const claims = () => queue.called('claim').length;
  // Right after a poll's look: the next one is 200 ms away.
  const before = looks();
  await until(() => looks() > before);
  await pass(1);
  const [looked, claimed] = [looks(), claims()];
  queue.plan('a', 1);
  worker!.poke({ tenantId: 't1', endpointIds: ['a'] });
  await until(() => claims() > claimed, 50);
  expect(looks()).toBe(looked);
  // An endpoint with nothing here yet needs the look, which also takes its lease.
  queue.plan('b', 1);
  worker!.poke({ tenantId: 't1', endpointIds: ['b'] });
  await until(() => looks() > looked, 50);
  await until(() => queue.claimed().some((row) => row.endpointId === 'b'), 50);
});

it("does not claim again at each attempt's end for an endpoint whose last claim found all there was, until planning names it", async () => {
  const queue = new FakeQueue();
  queue.endpoint('t1', 'a');
  queue.plan('a', 3);
  const sender = new FakeSender(() => undefined);
  start(queue, sender, { maxInFlight: 8 });
  await until(() => sender.open('a').length === 3);
  const claims = () => queue.called('claim').length;
  const claimed = claims();
  for (const request of sender.open('a')) request.answer({ status: 204 });
  await until(() => queue.pending('a').length === 0);
  await pass(20);
  expect(claims()).toBe(claimed);
  queue.plan('a', 1);
  worker!.poke({ tenantId: 't1', endpointIds: ['a'] });
  await until(() => sender.open('a').length === 1, 50);
});

it('has planning claim, within its room, what it plans for an endpoint leased here whose last claim found all there was, and makes it without a claim', async () => {
  const queue = new FakeQueue();
  queue.endpoint('t1', 'a');
  queue.endpoint('t2', 'b');
  queue.plan('a', 3);
  const sender = new FakeSender(() => undefined);
  start(queue, sender, { maxInFlight: 8 });
  await until(() => sender.open('a').length === 3);
  for (const request of sender.open('a')) request.answer({ status: 204 });
  await until(() => queue.pending('a').length === 0);
  const claims = queue.called('claim').length;

  // The tenant alone has 7 of the 8 slots, and may claim four times that ahead; none for a tenant
  // with no endpoint leased here, and none more while that room is set aside.
  const claiming = worker!.planningClaim('t1')!;
  expect([...claiming.rooms]).toEqual([['a', 28]]);
  expect(worker!.planningClaim('t2')).toBeUndefined();
  expect(worker!.planningClaim('t1')).toBeUndefined();

  // Planning writes two attempts under the claim, as planNext does, and hands them over.
  const rows = queue.plan('a', 2);
  worker!.planned(claiming, queue.claimRows(rows, claiming.claim, Date.now() + claiming.leaseMs));
  await until(() => sender.open('a').length === 2, 50);
  for (const request of sender.open('a')) request.answer({ status: 204 });
  await until(() => queue.pending('a').length === 0);
  expect(queue.called('claim').length).toBe(claims);
  expect(queue.outcomes.filter((o) => rows.some((row) => row.deliveryId === o.deliveryId))).toEqual(
    rows.map(() => expect.objectContaining({ succeeded: true })),
  );

  // Once a third of the endpoint's lease has passed unrenewed, planning leaves it to a claim.
  expect(worker!.planningClaim('t1')).toBeDefined();
  await pass(2000);
  expect(worker!.planningClaim('t1')).toBeUndefined();
});
