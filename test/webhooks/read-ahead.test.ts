/**
 * The events of attempts about to start are read many at a time, and never for more than the next
 * `readAheadPerEndpoint` of an endpoint's queue, nor more than the instance's bound in all: the
 * bounds on the bodies an instance holds.
 */
import type { ClaimedDelivery, EventToSend } from '../../src/webhooks/delivery-queue-repository';
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

/** Starts the queue's attempts one at a time, as slots free, as the worker does. */
async function drain(readAhead: ReadAhead, queue: ClaimedDelivery[], mostHeld = { held: 0 }) {
  const sent: Array<EventToSend | undefined> = [];
  while (queue.length > 0) {
    const starting = queue.splice(0, 1);
    const [body] = readAhead.take(starting, queue.slice(0, readAheadPerEndpoint));
    sent.push(await body);
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
      const starting = queue.splice(0, 1);
      const [body] = readAhead.take(starting, queue.slice(0, readAheadPerEndpoint));
      sent.push((await body)!.json);
      mostHeld = Math.max(mostHeld, readAhead.held);
    }
  expect(new Set(sent).size).toBe(500);
  expect(mostHeld).toBeLessThanOrEqual(32);
  expect(reads.flat()).toHaveLength(new Set(reads.flat()).size);
});

it('forgets what it read for attempts given back', async () => {
  const { read } = reader();
  const readAhead = new ReadAhead(read, 1000);
  const queue = Array.from({ length: 30 }, (_, i) => delivery(i));
  await readAhead.take(queue.splice(0, 1), queue.slice(0, readAheadPerEndpoint))[0];
  expect(readAhead.held).toBeGreaterThan(0);
  readAhead.forget(queue);
  expect(readAhead.held).toBe(0);
});

it('lets the attempts starting see a failed read, and reads again for the next ones', async () => {
  let failing = true;
  const { reads, read } = reader(() => failing);
  const readAhead = new ReadAhead(read, 1000);
  const queue = Array.from({ length: 30 }, (_, i) => delivery(i));
  const [failed] = readAhead.take(queue.splice(0, 1), queue.slice(0, readAheadPerEndpoint));
  await expect(failed).rejects.toThrow('the database went away');
  failing = false;
  const sent = await drain(readAhead, queue);
  expect(sent.map((event) => event?.json)).toEqual(
    Array.from({ length: 29 }, (_, i) => `{"id":"e${i + 1}"}`),
  );
  expect(reads.length).toBeGreaterThan(1);
});
