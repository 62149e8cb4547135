/**
 * The endpoint leases (endpoint-leases.ts) this instance took or renewed, as far as it knows: by
 * tenant, with when each was renewed, idle endpoints' too, which the slots forget. Planning claims
 * the attempts it plans only for endpoints leased here with most of their lease still to run.
 */
interface Endpoint {
  endpointId: string;
  tenantId: string;
}

/** Whether a lease renewed at `renewedAt` has two thirds of its `leaseMs` still to run: planning may claim under it, as a claim may under a lease renewed lately. */
export const mayClaimUnder = (renewedAt: number, leaseMs: number, now: number): boolean =>
  renewedAt + leaseMs - now >= (2 * leaseMs) / 3;

export class HeldLeases {
  private readonly byTenant = new Map<string, Map<string, number>>();

  constructor(private readonly leaseMs: number) {}

  /** Notes that the endpoint's lease is held here since `renewedAt`, or (undefined) not any more. */
  held({ endpointId, tenantId }: Endpoint, renewedAt: number | undefined): void {
    const leased = this.byTenant.get(tenantId) ?? new Map<string, number>();
    if (renewedAt === undefined) leased.delete(endpointId);
    else leased.set(endpointId, Math.max(renewedAt, leased.get(endpointId) ?? 0));
    if (leased.size === 0) this.byTenant.delete(tenantId);
    else this.byTenant.set(tenantId, leased);
  }

  /** Forgets the leases that have run out by `now`. */
  forgetRunOut(now: number): void {
    for (const [tenantId, leased] of this.byTenant) {
      for (const [endpointId, renewedAt] of leased)
        if (renewedAt + this.leaseMs <= now) leased.delete(endpointId);
      if (leased.size === 0) this.byTenant.delete(tenantId);
    }
  }

  has({ endpointId, tenantId }: Endpoint): boolean {
    return this.byTenant.get(tenantId)?.has(endpointId) ?? false;
  }

  /** Every endpoint leased here. */
  endpointIds(): Set<string> {
    return new Set([...this.byTenant.values()].flatMap((leased) => [...leased.keys()]));
  }

  /** The tenant's endpoints leased here that planning may claim for at `now`, with when each was renewed. */
  claimable(tenantId: string, now: number): Map<string, number> {
    const claimable = new Map<string, number>();
    for (const [endpointId, renewedAt] of this.byTenant.get(tenantId) ?? [])
      if (mayClaimUnder(renewedAt, this.leaseMs, now)) claimable.set(endpointId, renewedAt);
    return claimable;
  }
}
