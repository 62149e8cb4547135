/**
 * The attempts an instance has claimed, by tenant and endpoint, waiting for a slot or holding one,
 * and how the instance's `maxInFlight` slots are shared: tenants in turn (round-robin by tenant,
 * then by endpoint), and while other tenants have attempts waiting, a tenant starts no more than
 * its share, nor more than its receivers' answers have earned (`initialWindow`), so no tenant's
 * hanging receivers can take every slot. An endpoint holds at most
 * `maxInFlightPerEndpoint` slots. Attempts claimed ahead are bounded by `claimedAheadPerSlot`
 * times the same shares. Nothing
 * here reads or writes the database: what it gives up goes to `giveBack`.
 */
import type { ClaimedDelivery, DueEndpoint } from './delivery-queue-repository';

/** Attempts to one endpoint in flight at once, over every instance. */
export const maxInFlightPerEndpoint = 10;
/**
 * Attempts of one endpoint claimed ahead of those in flight (no event body is held for them):
 * enough to keep ten in flight while the next claim is made, and for each claim (half of them,
 * see free) to serve forty attempts.
 */
export const claimedAheadPerEndpoint = 80;
/**
 * Attempts claimed ahead for each slot, by a tenant (of its share) and by the instance: a claim
 * then serves several attempts even while many tenants share the slots. Claimed attempts hold no
 * event body, and a claim that waits too long for a slot is given back.
 */
export const claimedAheadPerSlot = 4;

/** An endpoint whose lease this instance holds and whose attempts it has. */
export interface LeasedEndpoint {
  endpointId: string;
  tenantId: string;
  /** Attempts holding slots now. */
  inFlight: number;
  /** Attempts claimed, waiting for a slot. */
  queue: ClaimedDelivery[];
  /** When its lease was last renewed (the start of the transaction that renewed it). */
  renewedAt: number;
}

interface Tenant {
  /** Attempts of the tenant holding slots now, and claimed and waiting. */
  inFlight: number;
  queued: number;
  /** The most slots the tenant may hold now, whatever its share: see `initialWindow`. */
  window: number;
  /** The tenant's endpoints leased here, in round-robin order. */
  endpoints: Set<string>;
}

/**
 * The slots a tenant may hold when it comes, before any of its attempts has ended, and the fewest
 * it is left. Each attempt that ends before the timeout adds one; each cut off by it halves them;
 * and one endpoint holds all but one of them at most, so its tenant's other endpoints go on. So a tenant's slots grow
 * as its receivers answer, and receivers that hang hold two slots, not the share they had when
 * few tenants wanted slots: a slot is held until its attempt ends, and hanging ones end only at the
 * timeout (15 tenants of hanging receivers took all 64 slots for 10 s, issue 44).
 */
export const initialWindow = 2;

/** An attempt given a slot: the slot is the endpoint's until it is freed. */
export interface Started {
  delivery: ClaimedDelivery;
  endpoint: LeasedEndpoint;
  /** When it took its slot. */
  at: number;
}

export interface SlotLimits {
  maxInFlight: number;
  /** An attempt's timeout: one that held its slot this long was cut off by it. */
  timeoutMs: number;
  /** The slots a tenant may hold before any of its attempts has ended: `initialWindow`. */
  firstSlotsPerTenant: number;
  /** How long an endpoint's lease lasts unrenewed: its attempts wait no longer than that for a slot. */
  endpointLeaseMs: number;
  /** The least time a claim must have left for its attempt to start (the attempt, then its outcome's write). */
  leaseLeftToStartMs: number;
}

export class DeliverySlots {
  private readonly leased = new Map<string, LeasedEndpoint>();
  /** Tenants with attempts here, in round-robin order. */
  private readonly tenants = new Map<string, Tenant>();
  private inFlight = 0;
  private queued = 0;
  /** Room set aside for claims under way, by tenant and in all: counted as claimed until they are answered. */
  private readonly setAsideByTenant = new Map<string, number>();
  private setAsideInAll = 0;
  /** A tenant alone leaves this many slots free, so that another tenant's first attempts start at once. */
  private readonly reserve: number;
  /** The endpoints the last look found with due attempts, by tenant: they count for the shares before anything of theirs is claimed. */
  endpointsDue = new Map<string, Set<string>>();
  /**
   * Whether the attempt may take a slot now: the worker says no while its host's address is being
   * looked up, so that a lookup never holds a slot (the endpoint's turn passes to the next).
   */
  startable: (delivery: ClaimedDelivery) => boolean = () => true;

  constructor(
    private readonly limits: SlotLimits,
    private readonly giveBack: (deliveries: ClaimedDelivery[]) => void,
    private readonly now: () => number = Date.now,
  ) {
    this.reserve = Math.ceil(limits.maxInFlight / 8);
  }

  /** The most slots (and the most claimed ahead) a tenant may hold while as many tenants as there are now want some. */
  share(): number {
    const { maxInFlight } = this.limits;
    const wanting = new Set(this.endpointsDue.keys());
    for (const [tenantId, tenant] of this.tenants)
      if (tenant.inFlight + tenant.queued > 0) wanting.add(tenantId);
    return wanting.size <= 1
      ? Math.max(1, maxInFlight - this.reserve)
      : Math.max(1, Math.floor(maxInFlight / wanting.size));
  }

  /** How many attempts of the endpoint may be claimed now: within its own cap, its tenant's share and the instance's. */
  roomFor({ endpointId, tenantId }: DueEndpoint): number {
    const endpoint = this.leased.get(endpointId);
    const held = (endpoint?.inFlight ?? 0) + (endpoint?.queue.length ?? 0);
    const ahead = this.share() * claimedAheadPerSlot;
    return Math.min(
      maxInFlightPerEndpoint + claimedAheadPerEndpoint - held,
      this.aheadFor(tenantId, endpointId, ahead) - (endpoint?.queue.length ?? 0),
      ahead -
        (this.tenants.get(tenantId)?.queued ?? 0) -
        (this.setAsideByTenant.get(tenantId) ?? 0),
      this.limits.maxInFlight * claimedAheadPerSlot - this.queued - this.setAsideInAll,
    );
  }

  /**
   * Sets `count` aside for a claim under way of the tenant's attempts, so that the room of the
   * endpoints claimed for with it, or at once, counts it; a negative count gives it back (the claim
   * was answered).
   */
  setAside(tenantId: string, count: number): void {
    const left = (this.setAsideByTenant.get(tenantId) ?? 0) + count;
    if (left === 0) this.setAsideByTenant.delete(tenantId);
    else this.setAsideByTenant.set(tenantId, left);
    this.setAsideInAll += count;
  }

  /**
   * How many attempts one endpoint may have claimed ahead: its part of its tenant's share, when
   * the tenant has more endpoints wanting slots, so that one endpoint's claims do not take what
   * its tenant's other endpoints would get. Rounded down, so that the parts of endpoints claimed
   * for in one claim fit the share together, and none comes last with what the others left.
   */
  private aheadFor(tenantId: string, endpointId: string, share: number): number {
    const wanting = new Set(this.endpointsDue.get(tenantId));
    for (const id of this.tenants.get(tenantId)?.endpoints ?? []) wanting.add(id);
    wanting.add(endpointId);
    return Math.min(claimedAheadPerEndpoint, Math.max(1, Math.floor(share / wanting.size)));
  }

  /** Whether the instance may claim anything more. */
  mayClaim(): boolean {
    return this.queued + this.setAsideInAll < this.limits.maxInFlight * claimedAheadPerSlot;
  }

  /** The tenant with the most attempts here (in flight and waiting), and how many. */
  busiestTenant(): { tenantId: string; pending: number } | undefined {
    let busiest: { tenantId: string; pending: number } | undefined;
    for (const [tenantId, { inFlight, queued }] of this.tenants)
      if (inFlight + queued > (busiest?.pending ?? 0))
        busiest = { tenantId, pending: inFlight + queued };
    return busiest;
  }

  /** The endpoints leased here. */
  endpoints(): LeasedEndpoint[] {
    return [...this.leased.values()];
  }

  get(endpointId: string): LeasedEndpoint | undefined {
    return this.leased.get(endpointId);
  }

  /** Queues attempts just claimed for the endpoint, whose lease was renewed (or as if) at `renewedAt`. */
  add({ endpointId, tenantId }: DueEndpoint, claimed: ClaimedDelivery[], renewedAt: number): void {
    const endpoint = this.leased.get(endpointId) ?? {
      endpointId,
      tenantId,
      inFlight: 0,
      queue: [],
      renewedAt,
    };
    endpoint.renewedAt = Math.max(endpoint.renewedAt, renewedAt);
    endpoint.queue.push(...claimed);
    this.queued += claimed.length;
    const tenant = this.tenantOf(tenantId);
    tenant.queued += claimed.length;
    tenant.endpoints.add(endpointId);
    this.leased.set(endpointId, endpoint);
    this.forgetIfIdle(endpointId);
  }

  /** Gives up an endpoint's queue (its lease is no longer held here); its attempts in flight keep their slots. */
  drop(endpoint: LeasedEndpoint): void {
    this.giveBack(this.dequeue(endpoint, endpoint.queue.length));
    this.forgetIfIdle(endpoint.endpointId);
  }

  /** Takes every queued attempt off its queue (the instance stops); those in flight keep their slots. */
  takeAllQueued(): ClaimedDelivery[] {
    return this.endpoints().flatMap((endpoint) => this.dequeue(endpoint, endpoint.queue.length));
  }

  /** Gives back what tenants claimed beyond their shares, when more tenants want slots than when they claimed. */
  trim(): void {
    const limit = this.share() * claimedAheadPerSlot;
    for (const tenant of this.tenants.values()) {
      for (const endpointId of [...tenant.endpoints].reverse()) {
        const excess = tenant.queued - limit;
        if (excess <= 0) break;
        const endpoint = this.leased.get(endpointId)!;
        const taken = endpoint.queue.splice(Math.max(0, endpoint.queue.length - excess));
        this.queued -= taken.length;
        tenant.queued -= taken.length;
        this.giveBack(taken);
        this.forgetIfIdle(endpointId);
      }
    }
  }

  /** Gives free slots to queued attempts, fairly: the attempts to start now. */
  fill(): Started[] {
    const share = this.share();
    const starting: Started[] = [];
    while (this.inFlight < this.limits.maxInFlight) {
      const next = this.nextAttempt(share);
      if (next === undefined) break;
      this.inFlight++;
      next.endpoint.inFlight++;
      this.tenantOf(next.endpoint.tenantId).inFlight++;
      starting.push(next);
    }
    return starting;
  }

  /** Frees an attempt's slot; whether its endpoint, still leased here, has room enough to claim more. */
  free({ endpoint, at }: Started): boolean {
    this.inFlight--;
    endpoint.inFlight--;
    const tenant = this.tenantOf(endpoint.tenantId);
    tenant.inFlight--;
    tenant.window =
      this.now() - at < this.limits.timeoutMs
        ? Math.min(tenant.window + 1, this.limits.maxInFlight)
        : Math.max(initialWindow, tenant.window >> 1);
    this.forgetIfIdle(endpoint.endpointId);
    if (!this.leased.has(endpoint.endpointId)) return false;
    // Claimed in batches: more once there is room for half of what the endpoint may hold.
    const { endpointId, tenantId } = endpoint;
    return (
      2 * this.roomFor(endpoint) >=
      this.aheadFor(tenantId, endpointId, this.share() * claimedAheadPerSlot)
    );
  }

  /**
   * The next attempt to give a slot: tenants in turn, each below its share, then its endpoints in
   * turn, each below its cap. Attempts whose claims no longer leave room for the attempt and its
   * outcome are given back unmade, and so are the queues of endpoints whose lease may have run out.
   */
  private nextAttempt(share: number): Started | undefined {
    for (const [tenantId, tenant] of this.tenants) {
      if (tenant.queued === 0) continue;
      const limit = Math.min(share, tenant.window);
      // One endpoint holds at most all but one of its tenant's slots, so that the tenant's other
      // endpoints are not held up behind its hanging receiver.
      const perEndpoint = tenant.endpoints.size > 1 ? Math.max(1, limit - 1) : limit;
      if (tenant.inFlight >= limit && this.heldWithin(tenant, perEndpoint) >= limit) continue;
      for (const endpointId of tenant.endpoints) {
        const endpoint = this.leased.get(endpointId)!;
        if (
          endpoint.queue.length === 0 ||
          endpoint.inFlight >= Math.min(maxInFlightPerEndpoint, perEndpoint)
        )
          continue;
        if (this.now() - endpoint.renewedAt > this.limits.endpointLeaseMs) {
          this.drop(endpoint);
          continue;
        }
        if (!this.startable(endpoint.queue[0])) continue;
        const [delivery] = this.dequeue(endpoint, 1);
        if (delivery.leaseUntil - this.now() < this.limits.leaseLeftToStartMs) {
          this.giveBack([delivery]);
          return this.nextAttempt(share);
        }
        // Both go to the back of their lines.
        this.tenants.delete(tenantId);
        this.tenants.set(tenantId, tenant);
        tenant.endpoints.delete(endpointId);
        tenant.endpoints.add(endpointId);
        return { delivery, endpoint, at: this.now() };
      }
    }
    return undefined;
  }

  /**
   * The tenant's slots held, counting no endpoint above `perEndpoint`: what a hanging endpoint took
   * beyond it (while the tenant's other endpoints had nothing waiting, or before the tenant's slots
   * halved) is not for the others to wait out.
   */
  private heldWithin(tenant: Tenant, perEndpoint: number): number {
    let held = 0;
    for (const endpointId of tenant.endpoints)
      held += Math.min(this.leased.get(endpointId)!.inFlight, perEndpoint);
    return held;
  }

  private tenantOf(tenantId: string): Tenant {
    let tenant = this.tenants.get(tenantId);
    if (tenant === undefined)
      this.tenants.set(
        tenantId,
        (tenant = {
          inFlight: 0,
          queued: 0,
          window: this.limits.firstSlotsPerTenant,
          endpoints: new Set(),
        }),
      );
    return tenant;
  }

  /** Forgets an endpoint with nothing here any more (and its tenant, when that was its last). */
  private forgetIfIdle(endpointId: string): void {
    const endpoint = this.leased.get(endpointId);
    if (endpoint === undefined || endpoint.inFlight > 0 || endpoint.queue.length > 0) return;
    this.leased.delete(endpointId);
    const tenant = this.tenants.get(endpoint.tenantId);
    tenant?.endpoints.delete(endpointId);
    if (tenant && tenant.endpoints.size === 0) this.tenants.delete(endpoint.tenantId);
  }

  /** Takes attempts off an endpoint's queue, keeping the counts. */
  private dequeue(endpoint: LeasedEndpoint, count: number): ClaimedDelivery[] {
    const taken = endpoint.queue.splice(0, count);
    this.queued -= taken.length;
    this.tenantOf(endpoint.tenantId).queued -= taken.length;
    return taken;
  }
}
