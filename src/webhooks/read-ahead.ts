/**
 * The events of the attempts about to start, read many at a time: when an attempt takes its slot,
 * the events of the next `readAheadPerEndpoint` attempts in its endpoint's queue are read with it
 * in one query, once half of them are not read yet. So an attempt rarely waits for a read of its
 * own, a read serves about as many attempts as the endpoint may have in flight, and the instance
 * holds the bodies of the next `readAheadPerEndpoint` of each endpoint, and of no more than
 * `maxHeld` attempts in all, never of the whole queue claimed ahead.
 */
import type { ClaimedDelivery, EventToSend } from './delivery-queue-repository';
import { maxInFlightPerEndpoint, type Started } from './delivery-slots';

/** The attempts of an endpoint whose events are read ahead: twice what it may have in flight, read half at a time. */
export const readAheadPerEndpoint = 2 * maxInFlightPerEndpoint;

/** An attempt's event: undefined when retention removed it. */
export type Body = EventToSend | undefined;

export class ReadAhead {
  /** Events read for attempts not started yet, by delivery id. */
  private readonly bodies = new Map<string, Body>();
  /** Reads under way, by the delivery ids they are for. */
  private readonly reading = new Map<string, Promise<Map<string, EventToSend>>>();

  constructor(
    private readonly read: (eventIds: string[]) => Promise<Map<string, EventToSend>>,
    private readonly maxHeld: number,
  ) {}

  /**
   * The events of the attempts starting now (already taken off their endpoints' queues), each at
   * once when it was read ahead, otherwise once read. The heads of their endpoints' queues are
   * read with them when some are missing, or on their own once the attempt halfway down the
   * read-ahead has nothing read: reads take the heads of queues, so half of it is unread then.
   */
  take(starting: readonly Started[]): Array<Body | Promise<Body>> {
    let toRead: ClaimedDelivery[] | undefined;
    for (const { delivery } of starting) if (this.unread(delivery)) (toRead ??= []).push(delivery);
    let room = this.maxHeld - this.bodies.size - this.reading.size;
    starting.forEach(({ endpoint }, i) => {
      if (starting.findIndex((other) => other.endpoint === endpoint) !== i) return;
      const { queue } = endpoint;
      const window = Math.min(queue.length, readAheadPerEndpoint);
      const halfway = queue[window >> 1];
      if (halfway === undefined || (toRead === undefined && !this.unread(halfway))) return;
      for (let j = 0; j < window && room > 0; j++)
        if (this.unread(queue[j])) {
          (toRead ??= []).push(queue[j]);
          room--;
        }
    });
    if (toRead !== undefined) this.readNow(toRead);
    return starting.map(({ delivery }) => {
      const { deliveryId, eventId } = delivery;
      if (this.bodies.has(deliveryId)) {
        const body = this.bodies.get(deliveryId);
        this.bodies.delete(deliveryId);
        return body;
      }
      const read = this.reading.get(deliveryId)!;
      this.reading.delete(deliveryId);
      return read.then((events) => {
        this.bodies.delete(deliveryId);
        return events.get(eventId);
      });
    });
  }

  /** Forgets what was read for attempts that will not start here (given back, or their endpoint dropped). */
  forget(deliveries: ClaimedDelivery[]): void {
    for (const { deliveryId } of deliveries) {
      this.bodies.delete(deliveryId);
      this.reading.delete(deliveryId);
    }
  }

  /** How many events are held for attempts not started yet. */
  get held(): number {
    return this.bodies.size;
  }

  private unread({ deliveryId }: ClaimedDelivery): boolean {
    return !this.bodies.has(deliveryId) && !this.reading.has(deliveryId);
  }

  private readNow(deliveries: ClaimedDelivery[]): void {
    const read = this.read([...new Set(deliveries.map((delivery) => delivery.eventId))]);
    for (const delivery of deliveries) this.reading.set(delivery.deliveryId, read);
    read.then(
      (events) => {
        for (const { deliveryId, eventId } of deliveries)
          if (this.reading.get(deliveryId) === read) {
            this.reading.delete(deliveryId);
            this.bodies.set(deliveryId, events.get(eventId));
          }
      },
      () => {
        // Read again when they start; the attempts starting now see the failure themselves.
        for (const { deliveryId } of deliveries)
          if (this.reading.get(deliveryId) === read) this.reading.delete(deliveryId);
      },
    );
  }
}
