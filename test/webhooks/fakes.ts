/**
 * An in-memory delivery queue and sender for the worker's unit tests: the queue keeps the claim
 * rules of the real one (an attempt is claimed by one claim at a time, an outcome is kept only
 * under its claim), and the sender answers as the test says, at once or when it is told to.
 */
import { newestVersion } from '../../src/versions/versions';
import type { Logger } from 'pino';
import type {
  ClaimedDelivery,
  DeliveryOutcome,
  DeliverySuccess,
  DueEndpoint,
  EventToSend,
} from '../../src/webhooks/delivery-queue-repository';
import type { DeliveryQueue } from '../../src/webhooks/delivery-worker';
import type { Attempt, AttemptResult, WebhookClient } from '../../src/webhooks/http-client';
import type { DeliveryOutcomeLabel, WebhookMetrics } from '../../src/webhooks/attempt-metrics';

export interface Row {
  deliveryId: string;
  endpointId: string;
  eventId: string;
  attempt: number;
  dueAt: number;
  status: 'pending' | 'succeeded' | 'failed';
  claim?: string;
  leaseUntil?: number;
}

export class FakeQueue implements DeliveryQueue {
  readonly rows: Row[] = [];
  readonly endpointsById = new Map<string, { tenantId: string; enabled: boolean }>();
  /** Every outcome written and kept, in order. */
  readonly outcomes: Array<{ deliveryId: string; succeeded: boolean; outcome?: DeliveryOutcome }> =
    [];
  /** Every call, by method, with its time. */
  readonly calls: Array<{ method: string; at: number; args: unknown[] }> = [];
  /** Calls of these methods fail this many more times. */
  readonly failures = new Map<string, number>();
  /** Claims that commit and then fail, as a claim whose answer was lost. */
  loseClaimAnswers = 0;
  /** While set, writes of successes wait for it. */
  successesGate: Promise<void> | undefined;
  private nextId = 0;

  endpoint(tenantId: string, endpointId: string): void {
    this.endpointsById.set(endpointId, { tenantId, enabled: true });
  }

  /** Plans `count` first attempts of new events to the endpoint, due now. */
  plan(endpointId: string, count: number): Row[] {
    const planned = Array.from({ length: count }, () => {
      const id = String(++this.nextId).padStart(6, '0');
      return this.add({ endpointId, eventId: `event-${id}`, attempt: 1, dueAt: Date.now() });
    });
    return planned;
  }

  pending(endpointId?: string): Row[] {
    return this.rows.filter(
      (row) =>
        row.status === 'pending' && (endpointId === undefined || row.endpointId === endpointId),
    );
  }

  claimed(): Row[] {
    return this.pending().filter((row) => this.underClaim(row));
  }

  called(method: string): Array<{ at: number; args: unknown[] }> {
    return this.calls.filter((call) => call.method === method);
  }

  async endpointsWithDueAttempts(holder: string, graceMs: number): Promise<DueEndpoint[]> {
    this.call('endpointsWithDueAttempts', holder, graceMs);
    const due = new Set(this.due().map((row) => row.endpointId));
    return [...due]
      .filter((endpointId) => this.endpointsById.get(endpointId)?.enabled)
      .map((endpointId) => ({
        endpointId,
        tenantId: this.endpointsById.get(endpointId)!.tenantId,
      }));
  }

  async claim(
    wanted: Map<string, number>,
    holder: string,
    claim: string,
    times: { leaseMs: number; endpointLeaseMs: number; graceMs: number },
  ): Promise<Map<string, { leasedUntil: number; deliveries: ClaimedDelivery[] }>> {
    this.call('claim', new Map(wanted), holder, claim, times);
    const leaseUntil = Date.now() + times.leaseMs;
    const answers = new Map<string, { leasedUntil: number; deliveries: ClaimedDelivery[] }>();
    for (const [endpointId, count] of wanted) {
      const endpoint = this.endpointsById.get(endpointId);
      if (!endpoint?.enabled) continue;
      const rows = this.due()
        .filter((row) => row.endpointId === endpointId)
        .sort((a, b) => a.dueAt - b.dueAt)
        .slice(0, count);
      answers.set(endpointId, {
        leasedUntil: Date.now() + times.endpointLeaseMs,
        deliveries: this.claimRows(rows, claim, leaseUntil),
      });
    }
    if (this.loseClaimAnswers > 0) {
      this.loseClaimAnswers--;
      throw new Error('the connection broke at the commit');
    }
    return answers;
  }

  /** Puts the rows under the claim, as a claim or planning writes them; what the worker is handed. */
  claimRows(rows: Row[], claim: string, leaseUntil: number): ClaimedDelivery[] {
    return rows.map((row) => {
      Object.assign(row, { claim, leaseUntil });
      return {
        deliveryId: row.deliveryId,
        claim,
        leaseUntil,
        endpointId: row.endpointId,
        tenantId: this.endpointsById.get(row.endpointId)!.tenantId,
        url: `https://${row.endpointId}.example/hook`,
        secrets: [`whsec_${Buffer.alloc(32, 1).toString('base64')}`],
        endpointFailing: false,
        eventId: row.eventId,
        eventType: 'task.created',
        attempt: row.attempt,
        apiVersion: newestVersion,
      };
    });
  }

  async stillLeased(endpointIds: string[], holder: string): Promise<Set<string>> {
    this.call('stillLeased', endpointIds, holder);
    return this.enabled(endpointIds);
  }

  async renewLeases(
    endpointIds: string[],
    holder: string,
    endpointLeaseMs: number,
  ): Promise<Set<string>> {
    this.call('renewLeases', endpointIds, holder, endpointLeaseMs);
    return this.enabled(endpointIds);
  }

  async releaseLeases(endpointIds: string[], holder: string): Promise<void> {
    this.call('releaseLeases', endpointIds, holder);
  }

  async eventsToSend(eventIds: string[]): Promise<Map<string, EventToSend>> {
    this.call('eventsToSend', eventIds);
    const createdAt = new Date(Date.now() - 1000).toISOString();
    return new Map(
      eventIds.map((eventId) => [
        eventId,
        { json: JSON.stringify({ event_id: eventId, created_at: createdAt }), createdAt },
      ]),
    );
  }

  async recordOutcome(
    delivery: ClaimedDelivery,
    outcome: DeliveryOutcome,
  ): Promise<{ kept: boolean; disabled?: 'gone' | 'failing' }> {
    this.call('recordOutcome', delivery, outcome);
    const row = this.ours(delivery);
    if (row === undefined) return { kept: false };
    Object.assign(row, { status: outcome.succeeded ? 'succeeded' : 'failed', claim: undefined });
    this.outcomes.push({ deliveryId: row.deliveryId, succeeded: outcome.succeeded, outcome });
    if (outcome.retryAt)
      this.add({
        endpointId: row.endpointId,
        eventId: row.eventId,
        attempt: row.attempt + 1,
        dueAt: outcome.retryAt.getTime(),
      });
    const endpoint = this.endpointsById.get(row.endpointId)!;
    if (outcome.endpoint.disable?.reason === 'gone' && endpoint.enabled) {
      endpoint.enabled = false;
      return { kept: true, disabled: 'gone' };
    }
    return { kept: true };
  }

  async recordSuccesses(successes: DeliverySuccess[]): Promise<number> {
    this.call('recordSuccesses', successes.length);
    await this.successesGate;
    let kept = 0;
    for (const { delivery } of successes) {
      const row = this.ours(delivery);
      if (row === undefined) continue;
      Object.assign(row, { status: 'succeeded', claim: undefined });
      this.outcomes.push({ deliveryId: row.deliveryId, succeeded: true });
      kept++;
    }
    return kept;
  }

  async release(deliveries: ClaimedDelivery[]): Promise<void> {
    this.call(
      'release',
      deliveries.map((delivery) => delivery.deliveryId),
    );
    for (const delivery of deliveries) {
      const row = this.ours(delivery);
      if (row) Object.assign(row, { claim: undefined, leaseUntil: undefined });
    }
  }

  async releaseClaim(endpointIds: string[], claim: string): Promise<void> {
    this.call('releaseClaim', endpointIds, claim);
    for (const row of this.pending())
      if (endpointIds.includes(row.endpointId) && row.claim === claim)
        Object.assign(row, { claim: undefined, leaseUntil: undefined });
  }

  private add(row: Omit<Row, 'deliveryId' | 'status'>): Row {
    const full: Row = { ...row, deliveryId: `delivery-${++this.nextId}`, status: 'pending' };
    this.rows.push(full);
    return full;
  }

  private underClaim(row: Row): boolean {
    return row.claim !== undefined && row.leaseUntil! >= Date.now();
  }

  private due(): Row[] {
    return this.pending().filter((row) => row.dueAt <= Date.now() && !this.underClaim(row));
  }

  private ours(delivery: ClaimedDelivery): Row | undefined {
    return this.rows.find(
      (row) =>
        row.deliveryId === delivery.deliveryId &&
        row.status === 'pending' &&
        row.claim === delivery.claim,
    );
  }

  private enabled(endpointIds: string[]): Set<string> {
    return new Set(endpointIds.filter((id) => this.endpointsById.get(id)?.enabled));
  }

  private call(method: string, ...args: unknown[]): void {
    this.calls.push({ method, at: Date.now(), args });
    const failing = this.failures.get(method) ?? 0;
    if (failing > 0) {
      this.failures.set(method, failing - 1);
      throw new Error(`${method} failed`);
    }
  }
}

/** A request the sender was asked to make, with how to answer it. */
export interface Request {
  endpointId: string;
  webhookId: string;
  headers: Record<string, string>;
  at: number;
  answered: boolean;
  answer(result: Omit<AttemptResult, 'durationMs'>): void;
}

/** Answers each request with what `respond` says, or leaves it open when it says nothing. */
export class FakeSender implements WebhookClient {
  readonly requests: Request[] = [];
  /** The most requests open at once, in all and by endpoint. */
  maxOpen = 0;
  readonly maxOpenByEndpoint = new Map<string, number>();
  closed = false;

  constructor(
    private readonly respond: (
      request: Request,
    ) => Omit<AttemptResult, 'durationMs'> | undefined = () => ({ status: 200 }),
  ) {}

  /** Hosts being looked up: an attempt to one may not start until `looked(host)`. */
  private readonly lookups = new Map<string, () => void>();
  readonly lookedUp: string[] = [];

  /** Makes the host's address unknown: its attempts wait for a lookup that ends at `looked(host)`. */
  unknown(host: string): void {
    this.lookups.set(host, () => {});
  }

  looked(host: string): void {
    const end = this.lookups.get(host);
    this.lookups.delete(host);
    end?.();
  }

  prepare(url: string): true | Promise<void> {
    const host = new URL(url).hostname;
    if (!this.lookups.has(host)) return true;
    this.lookedUp.push(host);
    return new Promise((resolve) => {
      const earlier = this.lookups.get(host)!;
      this.lookups.set(host, () => {
        earlier();
        resolve();
      });
    });
  }

  open(endpointId?: string): Request[] {
    return this.requests.filter(
      (request) =>
        !request.answered && (endpointId === undefined || request.endpointId === endpointId),
    );
  }

  post(url: string, headers: Record<string, string>, _body: string): Attempt {
    let resolve!: (result: AttemptResult) => void;
    const result = new Promise<AttemptResult>((settle) => (resolve = settle));
    const request: Request = {
      endpointId: new URL(url).hostname.replace('.example', ''),
      webhookId: headers['webhook-id'],
      headers,
      at: Date.now(),
      answered: false,
      answer: (answer) => {
        if (request.answered) return;
        request.answered = true;
        resolve({ ...answer, durationMs: Date.now() - request.at });
      },
    };
    this.requests.push(request);
    this.maxOpen = Math.max(this.maxOpen, this.open().length);
    this.maxOpenByEndpoint.set(
      request.endpointId,
      Math.max(
        this.maxOpenByEndpoint.get(request.endpointId) ?? 0,
        this.open(request.endpointId).length,
      ),
    );
    const answer = this.respond(request);
    if (answer) request.answer(answer);
    return { result, ended: result.then(() => {}) };
  }

  callOff(): void {
    for (const request of this.open()) request.answer({ abandoned: true });
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

/** Metrics that count what the worker tells them. */
export function fakeMetrics() {
  const counts = {
    attempted: new Map<DeliveryOutcomeLabel, number>(),
    inFlight: 0,
    maxInFlight: 0,
    disabled: [] as string[],
  };
  const metrics: WebhookMetrics = {
    attempted: (outcome) => counts.attempted.set(outcome, (counts.attempted.get(outcome) ?? 0) + 1),
    inFlight: (change) => {
      counts.inFlight += change;
      counts.maxInFlight = Math.max(counts.maxInFlight, counts.inFlight);
    },
    delivered: () => {},
    disabled: (reason) => counts.disabled.push(reason),
  };
  return { metrics, counts };
}

/** A logger that keeps its lines' messages. */
export function fakeLogger() {
  const lines: Array<{ level: string; msg: string; fields: unknown }> = [];
  const at =
    (level: string) =>
    (fields: unknown, msg: string): void =>
      void lines.push({ level, msg, fields });
  const logger = { info: at('info'), warn: at('warn'), error: at('error') } as unknown as Logger;
  return { logger, lines };
}
