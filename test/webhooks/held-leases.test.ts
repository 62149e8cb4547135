/** What the worker knows of the endpoint leases it holds, and under which planning may claim. */
import { HeldLeases, mayClaimUnder } from '../../src/webhooks/held-leases';

const leaseMs = 6000;
const endpoint = (tenantId: string, endpointId: string) => ({ tenantId, endpointId });

it('lets planning claim under a lease with two thirds of it still to run, not less', () => {
  expect(mayClaimUnder(10_000, leaseMs, 10_000)).toBe(true);
  expect(mayClaimUnder(10_000, leaseMs, 12_000)).toBe(true);
  expect(mayClaimUnder(10_000, leaseMs, 12_001)).toBe(false);
  expect(mayClaimUnder(10_000, leaseMs, 17_000)).toBe(false);
});

it("offers a tenant's endpoints leased lately to planning, with when each was renewed, and no other tenant's", () => {
  const leases = new HeldLeases(leaseMs);
  leases.held(endpoint('t1', 'a1'), 10_000);
  leases.held(endpoint('t1', 'a2'), 7_000);
  leases.held(endpoint('t2', 'b1'), 10_000);
  expect(leases.claimable('t1', 10_500)).toEqual(new Map([['a1', 10_000]]));
  expect(leases.claimable('t2', 10_500)).toEqual(new Map([['b1', 10_000]]));
  expect(leases.claimable('t3', 10_500)).toEqual(new Map());
});

it('keeps the latest renewal it was told of, and forgets a lease given up or run out', () => {
  const leases = new HeldLeases(leaseMs);
  leases.held(endpoint('t1', 'a1'), 10_000);
  // A claim's answer that started before the last renewal says an earlier time: the later holds.
  leases.held(endpoint('t1', 'a1'), 9_000);
  expect(leases.claimable('t1', 12_000)).toEqual(new Map([['a1', 10_000]]));
  leases.held(endpoint('t1', 'a2'), 10_000);
  leases.held(endpoint('t2', 'b1'), 5_000);
  expect(leases.endpointIds()).toEqual(new Set(['a1', 'a2', 'b1']));

  leases.held(endpoint('t1', 'a2'), undefined);
  expect(leases.has(endpoint('t1', 'a2'))).toBe(false);
  leases.forgetRunOut(11_000);
  expect(leases.has(endpoint('t2', 'b1'))).toBe(false);
  expect(leases.has(endpoint('t1', 'a1'))).toBe(true);
  expect(leases.endpointIds()).toEqual(new Set(['a1']));
  leases.forgetRunOut(16_000);
  expect(leases.endpointIds()).toEqual(new Set());
});
