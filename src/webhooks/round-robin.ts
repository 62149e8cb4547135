/**
 * The order a look claims for the endpoints it found due: round-robin over tenants, and over each
 * tenant's endpoints from where its last claim left off, so that when there is room for a few
 * claims only, the same endpoints do not take it at every look.
 */
import type { DueEndpoint } from './delivery-queue-repository';

export class RoundRobin {
  /** Where each tenant's round starts next: after the endpoint it last claimed for. */
  private readonly lastClaimed = new Map<string, string>();

  /** The endpoints to claim for, round-robin by tenant, each tenant's endpoints from where it left off. */
  order(candidates: DueEndpoint[]): DueEndpoint[] {
    const byTenant = new Map<string, DueEndpoint[]>();
    for (const due of candidates)
      byTenant.set(due.tenantId, [...(byTenant.get(due.tenantId) ?? []), due]);
    const lines = [...byTenant].map(([tenantId, line]) => {
      line.sort((a, b) => (a.endpointId < b.endpointId ? -1 : 1));
      const last = this.lastClaimed.get(tenantId);
      const from = last === undefined ? 0 : line.findIndex((due) => due.endpointId > last);
      return from <= 0 ? line : [...line.slice(from), ...line.slice(0, from)];
    });
    const ordered: DueEndpoint[] = [];
    for (let i = 0; lines.some((line) => i < line.length); i++)
      for (const line of lines) if (i < line.length) ordered.push(line[i]);
    return ordered;
  }

  /** Notes a claim for the endpoint: its tenant's next round starts after it. */
  claimed(due: DueEndpoint): void {
    this.lastClaimed.set(due.tenantId, due.endpointId);
  }
}
