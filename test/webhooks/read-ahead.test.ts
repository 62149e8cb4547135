/**
 * The events of attempts about to start are read many at a time, and never for more than the next
 * `readAheadPerEndpoint` of an endpoint's queue, nor more than the instance's bound in all: the
 * bounds on the bodies an instance holds.
 */
import type { ClaimedDelivery, EventToSend } from '../../src/webhooks/delivery-queue-repository';
import type { LeasedEndpoint } from '../../src/webhooks/delivery-slots';
import { ReadAhead, readAheadPerEndpoint } from '../../src/webhooks/read-ahead';

const delivery = (i: number) => ({ deliveryId: `d${i}`, eventId: `e${i}` }) as ClaimedDelivery;
const eventOf = (eventId: string): EventToSend => ({ json: `{"id":"${eventId}"}`, createdAt: '' });

/** A read that answers at once, and remembers what each read asked for. */
function reader(fail = () => false) {
  const reads: string[][] = [];
  const read = async (eventIds: string[]) => {
    reads.push(eventIds);
    if (fail()) throw new Error('the database went away');
    return new Map(eventIds.map((eventId) => [eventId, eventOf(eventId)]));
  };
  return { reads, read };
}

/** Takes the first attempt off the endpoint's queue and starts it, as the worker gives it a slot. */
const start = (readAhead: ReadAhead, queue: ClaimedDelivery[]) =>
  readAhead.take([{ delivery: queue.shift()!, endpoint: { queue } as LeasedEndpoint, at: 0 }])[0];

/** Starts the queue's attempts one at a time, as slots free. */
async function drain(readAhead: ReadAhead, queue: ClaimedDelivery[], mostHeld = { held: 0 }) {
  const sent: Array<EventToSend | undefined> = [];
  while (queue.length > 0) {
    sent.push(await start(readAhead, queue));
    mostHeld.held = Math.max(mostHeld.held, readAhead.held);
  }
  return sent;
}

it('reads the events of about as many attempts as an endpoint may have in flight at a time, and holds no more than the next few', async () => {
  const { reads, read } = reader();
  const readAhead = new ReadAhead(read, 1000);
  const queue = Array.from({ length: 200 }, (_, i) => delivery(i));
  const mostHeld = { held: 0 };
  const sent = await drain(readAhead, queue, mostHeld);
  expect(sent.map((event) => event?.json)).toEqual(
    Array.from({ length: 200 }, (_, i) => `{"id":"e${i}"}`),
  );
  // Every event read once, most reads serving half the read-ahead (the last ones, what is left).
  expect(reads.flat().sort()).toEqual(Array.from({ length: 200 }, (_, i) => `e${i}`).sort());
  expect(reads.length).toBeLessThanOrEqual(200 / (readAheadPerEndpoint / 2) + 1);
  expect(mostHeld.held).toBeLessThanOrEqual(readAheadPerEndpoint);
  expect(readAhead.held).toBe(0);
});

it('holds no more bodies than its bound over many endpoints, and still reads each attempt its event', async () => {
  const { reads, read } = reader();
  const readAhead = new ReadAhead(read, 32);
  // Ten endpoints' queues of 50, one attempt of each starting in turn.
  const queues = Array.from({ length: 10 }, (_, e) =>
    Array.from({ length: 50 }, (_, i) => delivery(e * 100 + i)),
  );
  let mostHeld = 0;
  const sent: string[] = [];
  for (let turn = 0; turn < 50; turn++)
    for (const queue of queues) {
      sent.push((await start(readAhead, queue))!.json);
      mostHeld = Math.max(mostHeld, readAhead.held);
    }
  expect(new Set(sent).size).toBe(500);
  expect(mostHeld).toBeLessThanOrEqual(32);
  expect(reads.flat()).toHaveLength(new Set(reads.flat()).size);
});

it('reads the events of attempts starting together at once, with their endpoints’ next ones', async () => {
  const { reads, read } = reader();
  const readAhead = new ReadAhead(read, 1000);
  const queues = [0, 1, 2].map((e) => Array.from({ length: 30 }, (_, i) => delivery(e * 100 + i)));
  // Two attempts of the first endpoint and one of each other, as a claim's answer fills slots.
  const starting = [queues[0], queues[0], queues[1], queues[2]].map((queue) => ({
    delivery: queue.shift()!,
    endpoint: { queue } as LeasedEndpoint,
    at: 0,
  }));
  starting[1].endpoint = starting[0].endpoint;
  const bodies = await Promise.all(readAhead.take(starting));
  expect(bodies.map((body) => body?.json)).toEqual(
    ['e0', 'e1', 'e100', 'e200'].map((id) => `{"id":"${id}"}`),
  );
  expect(reads).toHaveLength(1);
  expect(reads[0]).toHaveLength(4 + 3 * readAheadPerEndpoint);
});

it('forgets what it read for attempts given back', async () => {
  const { read } = reader();
  const readAhead = new ReadAhead(read, 1000);
  const queue = Array.from({ length: 30 }, (_, i) => delivery(i));
  await start(readAhead, queue);
  expect(readAhead.held).toBeGreaterThan(0);
  readAhead.forget(queue);
  expect(readAhead.held).toBe(0);
});

it('lets the attempts starting see a failed read, and reads again for the next ones', async () => {
  let failing = true;
  const { reads, read } = reader(() => failing);
  const readAhead = new ReadAhead(read, 1000);
  const queue = Array.from({ length: 30 }, (_, i) => delivery(i));
  await expect(start(readAhead, queue)).rejects.toThrow('the database went away');
  failing = false;
  const sent = await drain(readAhead, queue);
  expect(sent.map((event) => event?.json)).toEqual(
    Array.from({ length: 29 }, (_, i) => `{"id":"e${i + 1}"}`),
  );
  expect(reads.length).toBeGreaterThan(1);
});
