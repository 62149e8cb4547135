/**
 * Makes webhook deliveries. An instance holds an endpoint's lease (one instance at a time, see
 * endpoint-leases.ts): it claims the endpoint's due attempts a few ahead, makes at most 10 at
 * once outside any transaction, and writes each outcome back under its claim with the retry it
 * plans. An instance that dies leaves its claims to run out; their attempts are then made again
 * by any instance, with the same webhook-id. An instance that lives on gives back what it claimed
 * and will not make (queue-writes.ts).
 *
 * The instance's slots are shared by tenants in turn (delivery-slots.ts). An attempt takes its
 * slot once its host's address is known (a lookup never holds one), and holds it until its
 * connection has ended as well as its answer. Attempts claimed ahead carry no event body: the
 * events of the next few of each endpoint are read together as attempts start (read-ahead.ts).
 *
 * The worker is given its queue (the database's side of it: delivery-queue-repository.ts) and its
 * sender (the HTTP client), and decides only what to claim, when, and what to start.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type {
  ClaimedDelivery,
  DeliveryQueueRepository,
  DueEndpoint,
} from './delivery-queue-repository';
import { repeatCycle, type RepeatingCycle } from '../background/repeating-cycle';
import { outcomeOf } from './attempt-outcome';
import { observeAttempt, sendSigned, settled } from './attempts';
import { HeldLeases } from './held-leases';
import { RoundRobin } from './round-robin';
import { DeliverySlots, initialWindow, type Started } from './delivery-slots';
import type { Attempt, AttemptResult, WebhookClient } from './http-client';
import type { WebhookMetrics } from './attempt-metrics';
import { queueWrites, type QueueWrites } from './queue-writes';
import { ReadAhead, type Body } from './read-ahead';
import type { PlanningClaim } from './webhook-planning-repository';

/** What the worker asks of the queue of attempts: the repository, but for what only metrics and a dead thread's successor use. */
export type DeliveryQueue = Omit<DeliveryQueueRepository, 'countDue' | 'releaseHolder'>;

/** Claims made at once: claims take few of the pool's connections, whatever the number of endpoints. */
const claimsAtOnce = 2;
/** Endpoints claimed for in one claim at the most: its read is a UNION ALL of one indexed read for each. */
const endpointsPerClaim = 20;
/** How often an instance looks for due attempts (planned by another instance, or retries come due). */
const pollMs = 200;
/** How long a look waits after a poke, so the pokes close behind one make one look. */
const gatherMs = 5;
/** How long an endpoint's lease lasts without renewal; renewed, by a claim or on its own, once a third of it has passed. */
const endpointLeaseMs = 5000;
/** Room left on a claim for writing the outcome (with retries) after its attempt: an attempt with less is given back unmade. */
const outcomeWindowMs = 5000;

/** An endpoint in a claim under way, with the room set aside for it. */
interface Claiming {
  due: DueEndpoint;
  room: number;
}

export interface DeliveryWorker {
  /**
   * Says that attempts were just planned for these endpoints of the tenant (or, without them, for
   * some endpoints): claim now rather than at the next poll.
   */
  poke(planned?: { tenantId: string; endpointIds: Iterable<string> }): void;
  /**
   * Room for planning to claim the attempts it plans for the tenant's endpoints leased here whose
   * last claim took all there was (nothing older waits for them), set aside until `planned`.
   */
  planningClaim(tenantId: string): PlanningClaim | undefined;
  /** What planning claimed (undefined: its transaction failed), to queue for slots. */
  planned(claiming: PlanningClaim, claimed: ClaimedDelivery[] | undefined): void;
  /** The tenant with the most attempts claimed here, in flight or waiting: the one a thread that dies may pause. */
  busiestTenant(): { tenantId: string; pending: number } | undefined;
  /** Stops looking, calls off the attempts in flight and gives their claims and endpoints back. */
  stop(): Promise<void>;
}

export interface DeliveryWorkerOptions {
  logger: Logger;
  metrics: WebhookMetrics;
  timeoutMs: number;
  retryScheduleMs: number[];
  maxInFlight: number;
  /** The slots a tenant may hold before any of its attempts has ended (delivery-slots.ts, `initialWindow`). */
  firstSlotsPerTenant?: number;
  /** Names this worker in leases; a delivery thread's is given by the main thread, which gives back what it held if the thread dies. */
  holder?: string;
}

/** Starts looking for due attempts at once; `sender` is closed when the worker stops. */
export function startDeliveryWorker(
  { queue, sender }: { queue: DeliveryQueue; sender: WebhookClient },
  options: DeliveryWorkerOptions,
): DeliveryWorker {
  const worker = new Worker(queue, sender, options);
  return {
    poke: (planned) => worker.poke(planned),
    planningClaim: (tenantId) => worker.planningClaim(tenantId),
    planned: (claiming, claimed) => worker.planned(claiming, claimed),
    busiestTenant: () => worker.busiestTenant(),
    stop: () => worker.stop(),
  };
}

class Worker {
  private readonly holder: string;
  private readonly times: { leaseMs: number; endpointLeaseMs: number; graceMs: number };
  private readonly slots: DeliverySlots;
  private readonly roundRobin = new RoundRobin();
  private readonly writes: QueueWrites;
  /** Endpoints the last look found due and no claim has been made for since (no room for them then). */
  private readonly unclaimed = new Map<string, string>();
  /**
   * Endpoints leased here with attempts to claim, with their tenants: top-ups, claimed without a
   * look at every endpoint. Their claimed-ahead attempts ran low, or attempts were just planned
   * for them. The tenant is kept here because the slots forget an endpoint with nothing left, and
   * its top-up must not wait for the poll.
   */
  private readonly topUps = new Map<string, string>();
  /**
   * Endpoints whose last claim found fewer due attempts than it asked for: an attempt's end tops
   * them up no more until planning names them or a look finds them due. At the peak about one
   * claim in six found nothing, while the attempts it waited for were still being planned.
   */
  private readonly drained = new Set<string>();
  private readonly leases = new HeldLeases(endpointLeaseMs);
  /** Room set aside for planning's claims under way, by claim. */
  private readonly planningClaims = new Map<
    string,
    { tenantId: string; renewedAt: Map<string, number>; startedAt: number }
  >();
  /** Hosts being looked up for attempts waiting to start: the slots are filled again once each ends. */
  private readonly lookingUp = new Set<string>();
  /** Attempts being started or written back: stop() waits for them. */
  private readonly attempts = new Set<Promise<void>>();
  private stopping = false;
  /** A look at every endpoint is due (the poll, or attempts were planned for an endpoint not leased here); otherwise only the top-ups. */
  private scanDue = true;
  /** When the last look at every endpoint began. */
  private scannedAt = 0;
  private readonly cycles: RepeatingCycle;
  private readonly readAhead: ReadAhead;
  /** Failed reads already logged: one line for a read, however many attempts waited on it. */
  private readonly failedReads = new WeakSet<object>();

  constructor(
    private readonly queue: DeliveryQueue,
    private readonly sender: WebhookClient,
    private readonly options: DeliveryWorkerOptions,
  ) {
    const { timeoutMs, maxInFlight, logger } = options;
    this.holder = options.holder ?? randomUUID();
    this.times = {
      // A claimed attempt waits for a slot (it is made only with the timeout and the outcome's
      // window still left on its claim), is made (the timeout again) and written back.
      leaseMs: 4 * timeoutMs + outcomeWindowMs,
      endpointLeaseMs,
      // Another instance takes an endpoint over only once this one's attempts, started while it
      // still held its lease, have all been cut off: the cap holds across the handover.
      graceMs: timeoutMs + 1000,
    };
    // No more bodies read ahead than there are slots: with those in flight, twice the slots at most.
    this.readAhead = new ReadAhead((eventIds) => queue.eventsToSend(eventIds), maxInFlight);
    this.writes = queueWrites(queue, { logger, stopping: () => this.stopping });
    this.slots = new DeliverySlots(
      {
        maxInFlight,
        timeoutMs,
        firstSlotsPerTenant: options.firstSlotsPerTenant ?? initialWindow,
        endpointLeaseMs,
        leaseLeftToStartMs: timeoutMs + outcomeWindowMs,
      },
      (deliveries) => {
        this.readAhead.forget(deliveries);
        void this.writes.giveBack(deliveries);
      },
    );
    this.slots.startable = (delivery) => this.addressKnown(delivery);
    this.cycles = repeatCycle(() => this.cycle(), {
      gatherMs,
      pollMs: () => pollMs,
      onPoll: () => (this.scanDue = true),
    });
  }

  poke(planned?: { tenantId: string; endpointIds: Iterable<string> }): void {
    // An endpoint leased here is claimed for at once; any other needs the look at every endpoint,
    // which also takes its lease. At the peak that look and its lease checks, at every planning,
    // took half of each cycle's round trips.
    if (planned === undefined) this.scanDue = true;
    else
      for (const endpointId of planned.endpointIds)
        if (this.slots.get(endpointId)) {
          this.drained.delete(endpointId);
          this.topUps.set(endpointId, planned.tenantId);
        } else this.scanDue = true;
    this.cycles.soon();
  }

  planningClaim(tenantId: string): PlanningClaim | undefined {
    if (this.stopping) return undefined;
    const now = Date.now();
    const rooms = new Map<string, number>();
    const renewedAt = new Map<string, number>();
    for (const [endpointId, renewed] of this.leases.claimable(tenantId, now)) {
      if (!this.drained.has(endpointId)) continue;
      const room = this.slots.roomFor({ endpointId, tenantId });
      if (room <= 0) continue;
      this.slots.setAside(tenantId, room);
      rooms.set(endpointId, room);
      renewedAt.set(endpointId, renewed);
    }
    if (rooms.size === 0) return undefined;
    const claiming = { claim: randomUUID(), leaseMs: this.times.leaseMs, rooms };
    this.planningClaims.set(claiming.claim, { tenantId, renewedAt, startedAt: now });
    return claiming;
  }

  planned(claiming: PlanningClaim, claimed: ClaimedDelivery[] | undefined): void {
    const held = this.planningClaims.get(claiming.claim);
    if (held === undefined) return;
    this.planningClaims.delete(claiming.claim);
    const { tenantId, renewedAt, startedAt } = held;
    for (const room of claiming.rooms.values()) this.slots.setAside(tenantId, -room);
    const endpointIds = [...claiming.rooms.keys()];
    if (claimed === undefined)
      return this.writes.claimMayBeLost(claiming.claim, endpointIds, startedAt + claiming.leaseMs);
    if (this.stopping) return void this.writes.giveBack(claimed);
    for (const endpointId of endpointIds) {
      const deliveries = claimed.filter((delivery) => delivery.endpointId === endpointId);
      if (deliveries.length === 0) continue;
      // A look meanwhile found the endpoint disabled, deleted or leased elsewhere: none of it is made.
      if (!this.leases.has({ endpointId, tenantId })) void this.writes.giveBack(deliveries);
      else this.slots.add({ endpointId, tenantId }, deliveries, renewedAt.get(endpointId)!);
    }
    this.pump();
  }

  busiestTenant(): { tenantId: string; pending: number } | undefined {
    return this.slots.busiestTenant();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.cycles.stop();
    const endpointIds = this.slots.endpoints().map((endpoint) => endpoint.endpointId);
    const queued = this.slots.takeAllQueued();
    this.readAhead.forget(queued);
    await this.queue.release(queued).catch(() => {});
    this.sender.callOff();
    await Promise.all([...this.attempts]);
    await this.queue.releaseLeases(endpointIds, this.holder).catch(() => {});
    await this.sender.close();
  }

  /** One look: claims, round-robin, for the endpoints with due attempts (or to top up), and renews the leases of those with attempts here. */
  private async cycle(): Promise<void> {
    try {
      // Top-ups may ask for a cycle at every attempt's end, so that the poll's timer never fires:
      // the look at every endpoint comes at least as often anyway.
      const polled = this.scanDue || Date.now() - this.scannedAt >= pollMs;
      this.scanDue = false;
      const candidates = polled ? await this.scan() : this.stillUnclaimed();
      for (const [endpointId, tenantId] of this.topUps)
        candidates.set(endpointId, { endpointId, tenantId });
      this.topUps.clear();
      await this.claimInTurns([...candidates.values()]);
      await this.renewLeases(new Set(candidates.keys()), polled);
    } catch (error) {
      this.options.logger.warn(
        { err: error },
        'looking for webhook deliveries failed; trying again shortly',
      );
    }
  }

  /** A look at every endpoint: gives back what earlier looks could not, then finds the endpoints with due attempts. */
  private async scan(): Promise<Map<string, DueEndpoint>> {
    this.scannedAt = Date.now();
    await this.writes.giveBackLeftovers();
    const scanned = await this.queue.endpointsWithDueAttempts(this.holder, this.times.graceMs);
    this.slots.endpointsDue = new Map();
    for (const { tenantId, endpointId } of scanned)
      this.slots.endpointsDue.set(
        tenantId,
        (this.slots.endpointsDue.get(tenantId) ?? new Set()).add(endpointId),
      );
    this.unclaimed.clear();
    this.slots.trim();
    const found = new Map(scanned.map((due) => [due.endpointId, due]));
    this.leases.forgetRunOut(Date.now());
    const leased = this.leases.endpointIds();
    for (const endpointId of this.drained)
      if (found.has(endpointId) || !leased.has(endpointId)) this.drained.delete(endpointId);
    return found;
  }

  /** Between polls: the endpoints the last look found due and could not claim for yet. */
  private stillUnclaimed(): Map<string, DueEndpoint> {
    return new Map(
      [...this.unclaimed].map(([endpointId, tenantId]) => [endpointId, { endpointId, tenantId }]),
    );
  }

  /** Claims for the endpoints in turn, many endpoints a claim and a few claims at once, while there is room. */
  private async claimInTurns(candidates: DueEndpoint[]): Promise<void> {
    const ordered = this.roundRobin.order(candidates);
    for (const due of ordered)
      if (!this.topUps.has(due.endpointId)) this.unclaimed.set(due.endpointId, due.tenantId);
    let next = 0;
    const claimer = async () => {
      while (next < ordered.length && !this.stopping && this.slots.mayClaim()) {
        const batch: Claiming[] = [];
        while (next < ordered.length && batch.length < endpointsPerClaim && this.slots.mayClaim()) {
          const due = ordered[next++];
          const room = this.slots.roomFor(due);
          if (room <= 0) continue;
          this.roundRobin.claimed(due);
          this.slots.setAside(due.tenantId, room);
          batch.push({ due, room });
        }
        if (batch.length === 0) continue;
        await this.claimFor(batch).catch((error: unknown) =>
          this.options.logger.warn(
            { err: error },
            'claiming webhook deliveries failed; trying again shortly',
          ),
        );
      }
    };
    await Promise.all(Array.from({ length: claimsAtOnce }, claimer));
  }

  /** Claims, in one claim, what each endpoint has room for (set aside) of its due attempts, and starts what slots allow. */
  private async claimFor(batch: Claiming[]): Promise<void> {
    for (const { due } of batch) this.unclaimed.delete(due.endpointId);
    const startedAt = Date.now();
    const claim = randomUUID();
    const wanted = new Map(batch.map(({ due, room }) => [due.endpointId, room]));
    // The leases renewed lately need not be read again: at the peak, a third of a claim's round trips.
    const knownUntil = new Map<string, number>();
    for (const endpointId of wanted.keys()) {
      const endpoint = this.slots.get(endpointId);
      if (endpoint) knownUntil.set(endpointId, endpoint.renewedAt + endpointLeaseMs);
    }
    let answers: Awaited<ReturnType<DeliveryQueue['claim']>>;
    try {
      answers = await this.queue.claim(wanted, this.holder, claim, this.times, knownUntil);
    } catch (error) {
      this.writes.claimMayBeLost(claim, [...wanted.keys()], startedAt + this.times.leaseMs);
      throw error;
    } finally {
      for (const { due, room } of batch) this.slots.setAside(due.tenantId, -room);
    }
    if (this.stopping)
      return void (await this.writes.giveBack(
        [...answers.values()].flatMap((answer) => answer.deliveries),
      ));
    for (const { due, room } of batch) {
      const answer = answers.get(due.endpointId);
      const endpoint = this.slots.get(due.endpointId);
      if (answer !== undefined && answer.deliveries.length < room) this.drained.add(due.endpointId);
      else this.drained.delete(due.endpointId);
      if (answer === undefined) {
        this.leases.held(due, undefined);
        if (endpoint) this.slots.drop(endpoint);
        continue;
      }
      this.leases.held(due, answer.leasedUntil - endpointLeaseMs);
      if (answer.deliveries.length === 0 && endpoint === undefined) continue;
      // Serving is sure until leasedUntil: as if renewed for endpointLeaseMs at leasedUntil - endpointLeaseMs.
      this.slots.add(due, answer.deliveries, answer.leasedUntil - endpointLeaseMs);
    }
    this.pump();
  }

  /**
   * Renews the leases of the endpoints that have attempts here, renewing when a third of the time has
   * passed; at each poll, drops the attempts claimed ahead for an endpoint disabled or deleted
   * meanwhile (on any instance), so that nothing more than what is in flight reaches it.
   */
  private async renewLeases(claimedFor: Set<string>, polled: boolean): Promise<void> {
    const leased = this.slots.endpoints();
    if (polled && leased.length > 0) {
      const still = await this.queue.stillLeased(
        leased.map((endpoint) => endpoint.endpointId),
        this.holder,
      );
      for (const endpoint of leased)
        if (!still.has(endpoint.endpointId)) {
          this.leases.held(endpoint, undefined);
          this.slots.drop(endpoint);
        }
    }
    const due = this.slots
      .endpoints()
      .filter(
        (endpoint) =>
          !claimedFor.has(endpoint.endpointId) &&
          Date.now() - endpoint.renewedAt >= endpointLeaseMs / 3,
      );
    if (due.length === 0) return;
    const startedAt = Date.now();
    const renewed = await this.queue.renewLeases(
      due.map((endpoint) => endpoint.endpointId),
      this.holder,
      endpointLeaseMs,
    );
    for (const endpoint of due) {
      if (renewed.has(endpoint.endpointId)) {
        endpoint.renewedAt = startedAt;
        this.leases.held(endpoint, startedAt);
      } else {
        this.leases.held(endpoint, undefined);
        this.slots.drop(endpoint);
      }
    }
  }

  /** Gives free slots to queued attempts, fairly, and starts them. */
  private pump(): void {
    if (this.stopping) return;
    const starting = this.slots.fill();
    if (starting.length === 0) return;
    for (let i = 0; i < starting.length; i++) this.options.metrics.inFlight(1);
    this.startAttempts(starting);
  }

  /** Whether the attempt's host is known; if not, it is looked up (in its tenant's turn), and the slots filled again once it is. */
  private addressKnown(delivery: ClaimedDelivery): boolean {
    // Asked once a URL until its lookup ends: the slots ask at every fill, many times a second.
    if (this.lookingUp.has(delivery.url)) return false;
    const prepared = this.sender.prepare(delivery.url, delivery.tenantId);
    if (prepared === true) return true;
    this.lookingUp.add(delivery.url);
    void prepared.finally(() => {
      this.lookingUp.delete(delivery.url);
      this.pump();
    });
    return false;
  }

  /** Frees an attempt's slot, and fills it. */
  private freeSlot(started: Started): void {
    this.options.metrics.inFlight(-1);
    const { endpointId, tenantId } = started.endpoint;
    if (this.slots.free(started) && !this.drained.has(endpointId))
      this.topUps.set(endpointId, tenantId);
    if (this.topUps.size > 0 || this.unclaimed.size > 0) this.cycles.soon();
    this.pump();
  }

  /** Makes the attempts given slots, each once its event is known (read ahead, or read now with the next ones). */
  private startAttempts(starting: Started[]): void {
    const bodies = this.readAhead.take(starting);
    starting.forEach((started, i) => {
      const body = bodies[i];
      if (!(body instanceof Promise)) return this.begin(started, { event: body });
      this.track(
        body.then(
          (event) => this.begin(started, { event }),
          (error: unknown) => {
            if (!this.failedReads.has(error as object)) {
              this.failedReads.add(error as object);
              this.options.logger.warn(
                { err: error },
                'reading the events of webhook deliveries failed; their claims are given back',
              );
            }
            this.begin(started, undefined);
          },
        ),
      );
    });
  }

  /**
   * Makes the attempt with its event (`read` undefined: the event could not be read), writes its
   * outcome, and frees its slot once its lookup and connection have ended too.
   */
  private begin(started: Started, read: { event: Body } | undefined): void {
    const { delivery } = started;
    // An attempt not made (its event could not be read, or the service is stopping) has no log line of its own.
    const made = read !== undefined && !this.stopping;
    const attempt = made
      ? this.send(delivery, read.event)
      : settled({ abandoned: true, durationMs: 0 });
    // Only this is kept of the event while the attempt is in flight: its body is the request's.
    const createdAt = read?.event?.createdAt;
    this.track(
      attempt.result
        .then((result) => {
          if (made) observeAttempt(this.options, delivery, result, createdAt);
          return this.record(delivery, result);
        })
        .catch((error: unknown) =>
          this.options.logger.error(
            { err: error, delivery_id: delivery.deliveryId },
            'a webhook delivery attempt failed unexpectedly',
          ),
        ),
    );
    void attempt.ended.catch(() => {}).finally(() => this.freeSlot(started));
  }

  /** Makes the attempt: its HTTP call, the only part in flight to the endpoint. */
  private send(delivery: ClaimedDelivery, event: Body): Attempt {
    try {
      return sendSigned(this.sender, delivery, event);
    } catch (error) {
      this.options.logger.error(
        { err: error, delivery_id: delivery.deliveryId },
        'a webhook delivery attempt could not be made',
      );
      return settled({ error: 'the attempt could not be made', durationMs: 0 });
    }
  }

  /** Writes the attempt's outcome back (or gives the claim back, when the attempt was called off). */
  private async record(delivery: ClaimedDelivery, result: AttemptResult): Promise<void> {
    if (result.abandoned) return this.writes.giveBack([delivery]);
    const outcome = outcomeOf(delivery, result, this.options.retryScheduleMs);
    if (outcome.succeeded) return this.writes.recordSuccess(delivery, outcome);
    const { kept, disabled } = await this.writes.recordFailure(delivery, outcome);
    const { logger, metrics } = this.options;
    if (!kept)
      logger.info(
        { delivery_id: delivery.deliveryId },
        'a webhook delivery outcome was not kept: its endpoint was deleted, or its claim ran out and another attempt took its place',
      );
    if (disabled) {
      metrics.disabled(disabled);
      logger.warn(
        {
          webhook_endpoint_id: delivery.endpointId,
          tenant_id: delivery.tenantId,
          reason: disabled,
        },
        'webhook endpoint disabled',
      );
    }
  }

  /** Keeps the promise for stop() to wait for, until it settles. */
  private track(work: Promise<void>): void {
    const tracked: Promise<void> = work.finally(() => this.attempts.delete(tracked));
    this.attempts.add(tracked);
  }
}
