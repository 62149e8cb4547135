/**
 * Makes webhook deliveries. An instance serves an endpoint (one instance at a time, see the
 * deliveries repository): it claims the endpoint's due attempts a few ahead, makes at most 10 at
 * once outside any transaction, and writes each outcome back under its claim with the retry it
 * plans. An instance that dies leaves its claims to run out; their attempts are then made again
 * by any instance, with the same webhook-id. An instance that lives on gives back what it claimed
 * and will not make, even when the database was away as it tried: a release that failed, or a
 * claim whose answer was lost (its node died at the commit), is tried again at each look until
 * it succeeds or the lease has run out, so no attempt waits out a lease for a node's loss.
 *
 * The instance as a whole has `maxInFlight` slots, shared by tenants in turn (round-robin by
 * tenant, then by endpoint): while other tenants have attempts waiting, a tenant starts no more
 * than its share, so one tenant's hanging receivers cannot take every slot. An attempt holds its
 * slot until its lookup and its connection have ended as well as its answer. Attempts claimed
 * ahead are bounded for the instance too, and carry no event body: each event is read just
 * before its attempt is made.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { components } from '../../generated/api';
import type { Repositories } from '../db/repositories';
import type {
  ClaimedDelivery,
  DeliveryOutcome,
  DueEndpoint,
} from '../db/delivery-queue-repository';
import { repeatCycle } from '../background/repeating-cycle';
import { outcomeOf } from './attempt-outcome';
import { createWebhookClient, type Attempt, type AttemptResult } from './http-client';
import { outcomeLabel, type WebhookMetrics } from './metrics';
import { signatureHeader } from './signer';

type Event = components['schemas']['Event'];

/** Attempts to one endpoint in flight at once, over every instance. */
export const maxInFlightPerEndpoint = 10;
/** Attempts of one endpoint claimed ahead of those in flight; more are claimed once half have started. */
const claimedAheadPerEndpoint = 10;
/** Endpoints claimed for at once: claims take few of the pool's connections, whatever the number of endpoints. */
const claimsAtOnce = 2;
/** How often an instance looks for due attempts (planned by another instance, or retries come due). */
const pollMs = 200;
/** How long a look waits after a poke, so the pokes close behind one make one look. */
const gatherMs = 5;
/** How long serving an endpoint lasts without renewal; renewed, by a claim or on its own, once a third of it has passed. */
const serveMs = 5000;
/** Room left on a claim for writing the outcome (with retries) after its attempt: an attempt with less is given back unmade. */
const outcomeWindowMs = 5000;

interface Served {
  tenantId: string;
  /** Attempts holding slots now. */
  inFlight: number;
  /** Attempts claimed, waiting for a slot. */
  queue: ClaimedDelivery[];
  /** When serving was last made sure of (the start of the transaction that renewed it). */
  renewedAt: number;
}

interface Tenant {
  /** Attempts of the tenant holding slots now, and claimed and waiting. */
  inFlight: number;
  queued: number;
  /** The tenant's endpoints served here, in the order they take their turns. */
  endpoints: Set<string>;
}

export interface DeliveryWorker {
  /** Says that attempts were just planned: look now rather than at the next poll. */
  poke(): void;
  /** Stops looking, calls off the attempts in flight and gives their claims and endpoints back. */
  stop(): Promise<void>;
}

/** The URL's scheme, host and port: what a log line may say of a receiver (a path or query may hold a token). */
const originOf = (url: string) => {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The wait before the next try of a write that failed `failures` times: 100 ms doubling to 2 s, with jitter. */
const backoffMs = (failures: number) =>
  Math.min(2000, 100 * 2 ** (failures - 1)) * (0.5 + Math.random() / 2);

export function startDeliveryWorker(
  repositories: Repositories,
  options: {
    logger: Logger;
    metrics: WebhookMetrics;
    timeoutMs: number;
    retryScheduleMs: number[];
    allowPrivateTargets: boolean;
    maxInFlight: number;
  },
): DeliveryWorker {
  const { logger, metrics, timeoutMs, retryScheduleMs, maxInFlight } = options;
  const deliveries = repositories.deliveryQueue;
  const client = createWebhookClient({
    timeoutMs,
    allowPrivateTargets: options.allowPrivateTargets,
  });
  const holder = randomUUID();
  const times = {
    // A claimed attempt waits for a slot (it is made only with the timeout and the outcome's
    // window still left on its claim), is made (the timeout again) and written back.
    leaseMs: 4 * timeoutMs + outcomeWindowMs,
    serveMs,
    // Another instance takes an endpoint over only once this one's attempts, started while it still
    // served it, have all been cut off: the cap holds across the handover.
    graceMs: timeoutMs + 1000,
  };
  /** A tenant alone leaves this many slots free, so that another tenant's first attempts start at once. */
  const reserve = Math.ceil(maxInFlight / 8);
  const served = new Map<string, Served>();
  /** Tenants with attempts here, in the order they take their turns. */
  const tenants = new Map<string, Tenant>();
  let inFlight = 0;
  let queued = 0;
  /** Tenants the last look found with due attempts: they count for the shares before anything of theirs is claimed. */
  let tenantsDue = new Set<string>();
  /** Endpoints the last look found due and no claim has served since (no room for them then). */
  const unclaimed = new Map<string, string>();
  /** Endpoints served here whose claimed-ahead attempts ran low: claim more without a look at all. */
  const refills = new Set<string>();
  const attempts = new Set<Promise<void>>();
  const stopAttempts = new AbortController();
  let stopping = false;
  /** A look at every endpoint is due (the poll, or attempts were planned); otherwise only refills. */
  let scanDue = true;

  /** The most slots (and the most claimed ahead) a tenant may hold while as many tenants as there are now want some. */
  const share = () => {
    const wanting = new Set(tenantsDue);
    for (const [tenantId, tenant] of tenants)
      if (tenant.inFlight + tenant.queued > 0) wanting.add(tenantId);
    return wanting.size <= 1
      ? Math.max(1, maxInFlight - reserve)
      : Math.max(1, Math.floor(maxInFlight / wanting.size));
  };

  const tenantOf = (tenantId: string) => {
    let tenant = tenants.get(tenantId);
    if (tenant === undefined)
      tenants.set(tenantId, (tenant = { inFlight: 0, queued: 0, endpoints: new Set() }));
    return tenant;
  };

  /** Forgets an endpoint with nothing here any more (and its tenant, when that was its last). */
  const forgetIfIdle = (endpointId: string) => {
    const endpoint = served.get(endpointId);
    if (endpoint === undefined || endpoint.inFlight > 0 || endpoint.queue.length > 0) return;
    served.delete(endpointId);
    const tenant = tenants.get(endpoint.tenantId);
    tenant?.endpoints.delete(endpointId);
    if (tenant && tenant.endpoints.size === 0) tenants.delete(endpoint.tenantId);
  };

  /** Takes attempts off an endpoint's queue, keeping the counts. */
  const dequeue = (endpoint: Served, count: number) => {
    const taken = endpoint.queue.splice(0, count);
    queued -= taken.length;
    tenantOf(endpoint.tenantId).queued -= taken.length;
    return taken;
  };

  /** Attempts whose release failed, to give back at the next look. */
  const unreleased: ClaimedDelivery[] = [];
  /** Claims that may have committed though their answers were lost, by claim: to give back at each look until their leases run out. */
  const lostClaims = new Map<string, { endpointId: string; leaseUntil: number }>();

  /** Gives attempts back unmade; never fails: what could not be given back now is tried again at the next look. */
  const giveBack = async (claimed: ClaimedDelivery[]) => {
    if (claimed.length === 0) return;
    try {
      await deliveries.release(claimed);
    } catch {
      unreleased.push(...claimed);
    }
  };

  /** Gives back what earlier tries could not, as long as the leases have not run out by themselves. */
  const giveBackLeftovers = async () => {
    const now = Date.now();
    await giveBack(unreleased.splice(0).filter((delivery) => delivery.leaseUntil > now));
    for (const [claim, lost] of lostClaims) {
      if (lost.leaseUntil <= now) lostClaims.delete(claim);
      // Kept until its lease runs out: a commit that was under way as its node died may show on
      // the other nodes a little after the first try found nothing.
      else await deliveries.releaseClaim(lost.endpointId, claim).catch(() => {});
    }
  };

  /** Gives up an endpoint's queue (it is no longer served here, or the instance stops). */
  const dropQueue = (endpointId: string, endpoint: Served) => {
    void giveBack(dequeue(endpoint, endpoint.queue.length));
    forgetIfIdle(endpointId);
  };

  /** Gives back what tenants claimed beyond their shares, when more tenants want slots than when they claimed. */
  const trimQueues = () => {
    const limit = share();
    for (const tenant of tenants.values()) {
      for (const endpointId of [...tenant.endpoints].reverse()) {
        const excess = tenant.queued - limit;
        if (excess <= 0) break;
        const endpoint = served.get(endpointId)!;
        const taken = endpoint.queue.splice(Math.max(0, endpoint.queue.length - excess));
        queued -= taken.length;
        tenant.queued -= taken.length;
        void giveBack(taken);
        forgetIfIdle(endpointId);
      }
    }
  };

  /** Whether a write that failed `failures` times may be tried again after `wait`, before the claim runs out. */
  const mayRetry = (delivery: ClaimedDelivery, wait: number) =>
    !stopping && Date.now() + wait < delivery.leaseUntil;

  /**
   * Successes are written together: while one write runs, those that arrive wait for the next,
   * which takes them all in one statement (one commit for many, no wait when there is one). A
   * write that fails is tried again, with backoff, for those whose claims allow it.
   */
  const successes: Array<{
    delivery: ClaimedDelivery;
    responseStatus: number;
    durationMs: number;
    recovers: boolean;
    written: () => void;
  }> = [];
  let writingSuccesses = false;
  const writeSuccesses = async () => {
    if (writingSuccesses) return;
    writingSuccesses = true;
    let failures = 0;
    while (successes.length > 0) {
      const batch = successes.splice(0, 500);
      try {
        const written = await deliveries.recordSuccesses(batch);
        failures = 0;
        if (written < batch.length)
          logger.info(
            { not_kept: batch.length - written },
            'webhook delivery outcomes were not kept: their endpoints were deleted, or their claims ran out and other attempts took their place',
          );
        for (const success of batch) success.written();
      } catch (error) {
        const wait = backoffMs(++failures);
        const kept = batch.filter((success) => mayRetry(success.delivery, wait));
        const lost = batch.filter((success) => !kept.includes(success));
        if (lost.length > 0)
          logger.warn(
            { err: error, deliveries: lost.length },
            'writing webhook delivery outcomes failed until their claims ran out; the attempts will be made again',
          );
        for (const success of lost) success.written();
        successes.unshift(...kept);
        if (kept.length > 0) await sleep(wait);
      }
    }
    writingSuccesses = false;
  };
  const recordSuccess = (delivery: ClaimedDelivery, outcome: DeliveryOutcome) =>
    new Promise<void>((written) => {
      successes.push({
        delivery,
        responseStatus: outcome.responseStatus!,
        durationMs: outcome.durationMs,
        recovers: outcome.endpoint.recovers,
        written,
      });
      void writeSuccesses();
    });

  /** Writes a failed attempt's outcome, trying again with backoff while its claim allows. */
  const recordFailure = async (delivery: ClaimedDelivery, outcome: DeliveryOutcome) => {
    for (let failures = 1; ; failures++) {
      try {
        return await deliveries.recordOutcome(delivery, outcome);
      } catch (error) {
        const wait = backoffMs(failures);
        if (!mayRetry(delivery, wait)) {
          logger.warn(
            { err: error, delivery_id: delivery.deliveryId },
            'writing a webhook delivery outcome failed until its claim ran out; the attempt will be made again',
          );
          return { kept: true };
        }
        await sleep(wait);
      }
    }
  };

  /**
   * The attempt's log line and metrics: who and what (ids, the receiver's origin), how it went and
   * how long it took; never the body, the secret or the URL's path and query.
   */
  const observe = (
    delivery: ClaimedDelivery,
    result: AttemptResult,
    eventCreatedAt: string | undefined,
  ) => {
    const outcome = outcomeLabel(result);
    logger.info(
      {
        webhook_endpoint_id: delivery.endpointId,
        event_id: delivery.eventId,
        delivery_id: delivery.deliveryId,
        attempt: delivery.attempt,
        target: originOf(delivery.url),
        outcome: outcome ?? 'called_off',
        status: result.status ?? null,
        error: result.error ?? null,
        duration_ms: result.durationMs,
      },
      'webhook delivery attempt',
    );
    if (outcome === undefined) return;
    metrics.attempted(outcome);
    if (outcome === 'delivered' && eventCreatedAt !== undefined) metrics.delivered(eventCreatedAt);
  };

  /** Writes the attempt's outcome back (or gives the claim back, when the attempt was called off). */
  const record = async (delivery: ClaimedDelivery, result: AttemptResult) => {
    if (result.abandoned) return giveBack([delivery]);
    const outcome = outcomeOf(delivery, result, retryScheduleMs);
    if (outcome.succeeded) return recordSuccess(delivery, outcome);
    const { kept, disabled } = await recordFailure(delivery, outcome);
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
  };

  /** Makes the attempt: its HTTP call, the only part in flight to the endpoint. */
  const send = (delivery: ClaimedDelivery, event: Event | undefined): Attempt => {
    if (event === undefined)
      return {
        result: Promise.resolve({ error: 'event no longer kept', durationMs: 0 }),
        ended: Promise.resolve(),
      };
    const body = JSON.stringify(event);
    const timestamp = new Date();
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'task-tracker-webhooks/1.3',
      'webhook-id': delivery.eventId,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': signatureHeader(delivery.eventId, timestamp, body, delivery.secrets),
    };
    return client.post(delivery.url, headers, body, {
      queue: delivery.tenantId,
      stop: stopAttempts.signal,
    });
  };

  /** Frees an attempt's slot, and fills it. */
  const freeSlot = (endpointId: string, endpoint: Served) => {
    inFlight--;
    metrics.inFlight(-1);
    endpoint.inFlight--;
    tenantOf(endpoint.tenantId).inFlight--;
    forgetIfIdle(endpointId);
    // Claimed ahead in small batches: more once half of those claimed ahead have started.
    if (served.has(endpointId) && endpoint.queue.length <= claimedAheadPerEndpoint / 2)
      refills.add(endpointId);
    if (refills.size > 0 || unclaimed.size > 0) cycles.soon();
    pump();
  };

  /** Reads the events of attempts given slots (in one query), then makes the attempts. */
  const startAttempts = async (
    starting: Array<{ delivery: ClaimedDelivery; endpoint: Served }>,
  ) => {
    let events: Map<string, Event> | undefined;
    try {
      events = await deliveries.eventsToSend([
        ...new Set(starting.map(({ delivery }) => delivery.eventId)),
      ]);
    } catch (error) {
      logger.warn(
        { err: error, deliveries: starting.length },
        'reading the events of webhook deliveries failed; their claims are given back',
      );
    }
    for (const { delivery, endpoint } of starting) {
      let attempt: Attempt;
      if (events === undefined || stopping)
        attempt = {
          result: Promise.resolve({ abandoned: true, durationMs: 0 }),
          ended: Promise.resolve(),
        };
      else {
        try {
          attempt = send(delivery, events.get(delivery.eventId));
        } catch (error) {
          logger.error(
            { err: error, delivery_id: delivery.deliveryId },
            'a webhook delivery attempt could not be made',
          );
          attempt = {
            result: Promise.resolve({ error: 'the attempt could not be made', durationMs: 0 }),
            ended: Promise.resolve(),
          };
        }
      }
      // An attempt not made (its event could not be read, or the service is stopping) has no log line of its own.
      const made = events !== undefined && !stopping;
      const eventCreatedAt = events?.get(delivery.eventId)?.created_at;
      const recorded = attempt.result
        .then((result) => {
          if (made) observe(delivery, result, eventCreatedAt);
          return record(delivery, result);
        })
        .catch((error: unknown) =>
          logger.error(
            { err: error, delivery_id: delivery.deliveryId },
            'a webhook delivery attempt failed unexpectedly',
          ),
        )
        .finally(() => attempts.delete(recorded));
      attempts.add(recorded);
      // The slot frees once the lookup and connection the attempt started have ended too.
      void attempt.ended.catch(() => {}).finally(() => freeSlot(delivery.endpointId, endpoint));
    }
  };

  /**
   * The next attempt to give a slot: tenants in turn, each below its share, then its endpoints in
   * turn, each below its cap. Attempts whose claims no longer leave room for the attempt and its
   * outcome are given back unmade.
   */
  const nextAttempt = (
    limit: number,
  ): { delivery: ClaimedDelivery; endpoint: Served } | undefined => {
    for (const [tenantId, tenant] of tenants) {
      if (tenant.inFlight >= limit || tenant.queued === 0) continue;
      for (const endpointId of tenant.endpoints) {
        const endpoint = served.get(endpointId)!;
        if (endpoint.queue.length === 0 || endpoint.inFlight >= maxInFlightPerEndpoint) continue;
        if (Date.now() - endpoint.renewedAt > serveMs) {
          dropQueue(endpointId, endpoint);
          continue;
        }
        const [delivery] = dequeue(endpoint, 1);
        if (delivery.leaseUntil - Date.now() < timeoutMs + outcomeWindowMs) {
          void giveBack([delivery]);
          return nextAttempt(limit);
        }
        // Both go to the back of their lines.
        tenants.delete(tenantId);
        tenants.set(tenantId, tenant);
        tenant.endpoints.delete(endpointId);
        tenant.endpoints.add(endpointId);
        return { delivery, endpoint };
      }
    }
    return undefined;
  };

  /** Gives free slots to queued attempts, fairly, and starts them. */
  const pump = () => {
    if (stopping) return;
    const limit = share();
    const starting: Array<{ delivery: ClaimedDelivery; endpoint: Served }> = [];
    while (inFlight < maxInFlight) {
      const next = nextAttempt(limit);
      if (next === undefined) break;
      inFlight++;
      metrics.inFlight(1);
      next.endpoint.inFlight++;
      tenantOf(next.endpoint.tenantId).inFlight++;
      starting.push(next);
    }
    if (starting.length > 0) {
      const started = startAttempts(starting).finally(() => attempts.delete(started));
      attempts.add(started);
    }
  };

  /** How many attempts of the endpoint may be claimed now: within its own cap, its tenant's share and the instance's. */
  const roomFor = ({ endpointId, tenantId }: DueEndpoint) => {
    const endpoint = served.get(endpointId);
    const tenant = tenants.get(tenantId);
    const held = (endpoint?.inFlight ?? 0) + (endpoint?.queue.length ?? 0);
    return Math.min(
      maxInFlightPerEndpoint + claimedAheadPerEndpoint - held,
      share() - (tenant?.queued ?? 0),
      maxInFlight - queued,
    );
  };

  const claimFor = async (due: DueEndpoint) => {
    const { endpointId, tenantId } = due;
    const room = roomFor(due);
    if (room <= 0 || stopping) return;
    unclaimed.delete(endpointId);
    const startedAt = Date.now();
    const claim = randomUUID();
    let answer: Awaited<ReturnType<typeof deliveries.claim>>;
    try {
      answer = await deliveries.claim(endpointId, holder, claim, room, times);
    } catch (error) {
      lostClaims.set(claim, { endpointId, leaseUntil: startedAt + times.leaseMs });
      throw error;
    }
    const endpoint = served.get(endpointId);
    if (answer === undefined) {
      if (endpoint) dropQueue(endpointId, endpoint);
      return;
    }
    const claimed = answer.deliveries;
    if (stopping) return void (await giveBack(claimed));
    if (claimed.length === 0 && endpoint === undefined) return;
    // Serving is sure until servedUntil: as if renewed for serveMs at servedUntil - serveMs.
    const renewedAt = answer.servedUntil - serveMs;
    const now = endpoint ?? { tenantId, inFlight: 0, queue: [], renewedAt };
    now.renewedAt = Math.max(now.renewedAt, renewedAt);
    now.queue.push(...claimed);
    queued += claimed.length;
    const tenant = tenantOf(tenantId);
    tenant.queued += claimed.length;
    tenant.endpoints.add(endpointId);
    served.set(endpointId, now);
    forgetIfIdle(endpointId);
    pump();
  };

  /** Where each tenant's turn at claims starts next: after the endpoint it last claimed for. */
  const lastClaimed = new Map<string, string>();

  /** The endpoints to claim for, tenants taking turns, each tenant's endpoints from where it left off. */
  const inTurns = (candidates: DueEndpoint[]): DueEndpoint[] => {
    const byTenant = new Map<string, DueEndpoint[]>();
    for (const due of candidates)
      byTenant.set(due.tenantId, [...(byTenant.get(due.tenantId) ?? []), due]);
    const lines = [...byTenant].map(([tenantId, line]) => {
      line.sort((a, b) => (a.endpointId < b.endpointId ? -1 : 1));
      const last = lastClaimed.get(tenantId);
      const from = last === undefined ? 0 : line.findIndex((due) => due.endpointId > last);
      return from <= 0 ? line : [...line.slice(from), ...line.slice(0, from)];
    });
    const ordered: DueEndpoint[] = [];
    for (let i = 0; lines.some((line) => i < line.length); i++)
      for (const line of lines) if (i < line.length) ordered.push(line[i]);
    return ordered;
  };

  /** Claims for the endpoints in turn, a few at once, while there is room. */
  const claimInTurns = async (candidates: DueEndpoint[]) => {
    const ordered = inTurns(candidates);
    for (const due of ordered)
      if (!refills.has(due.endpointId)) unclaimed.set(due.endpointId, due.tenantId);
    let next = 0;
    const claimer = async () => {
      while (next < ordered.length && !stopping && queued < maxInFlight) {
        const due = ordered[next++];
        if (roomFor(due) <= 0) continue;
        lastClaimed.set(due.tenantId, due.endpointId);
        await claimFor(due).catch((error: unknown) =>
          logger.warn({ err: error }, 'claiming webhook deliveries failed; trying again shortly'),
        );
      }
    };
    await Promise.all(Array.from({ length: claimsAtOnce }, claimer));
  };

  /**
   * Keeps serving the endpoints that have attempts here, renewing when a third of the time has
   * passed; at each poll, drops the attempts claimed ahead for an endpoint disabled or deleted
   * meanwhile (on any instance), so that nothing more than what is in flight reaches it.
   */
  const keepServing = async (claimedFor: Set<string>, polled: boolean) => {
    if (polled && served.size > 0) {
      const still = await deliveries.stillServed([...served.keys()], holder);
      for (const [endpointId, endpoint] of served)
        if (!still.has(endpointId)) dropQueue(endpointId, endpoint);
    }
    const due = [...served].filter(
      ([endpointId, endpoint]) =>
        !claimedFor.has(endpointId) && Date.now() - endpoint.renewedAt >= serveMs / 3,
    );
    if (due.length === 0) return;
    const startedAt = Date.now();
    const renewed = await deliveries.keepServing(
      due.map(([endpointId]) => endpointId),
      holder,
      serveMs,
    );
    for (const [endpointId, endpoint] of due) {
      if (renewed.has(endpointId)) endpoint.renewedAt = startedAt;
      else dropQueue(endpointId, endpoint);
    }
  };

  /** One look: claims, in turns, for the endpoints with due attempts (or to refill), and keeps serving those with attempts here. */
  const cycle = async () => {
    try {
      const polled = scanDue;
      scanDue = false;
      const candidates = new Map<string, DueEndpoint>();
      if (polled) {
        await giveBackLeftovers();
        const scanned = await deliveries.endpointsWithDueAttempts(holder, times.graceMs);
        tenantsDue = new Set(scanned.map((due) => due.tenantId));
        unclaimed.clear();
        for (const due of scanned) candidates.set(due.endpointId, due);
        trimQueues();
      } else
        for (const [endpointId, tenantId] of unclaimed)
          candidates.set(endpointId, { endpointId, tenantId });
      for (const endpointId of refills) {
        const endpoint = served.get(endpointId);
        if (endpoint) candidates.set(endpointId, { endpointId, tenantId: endpoint.tenantId });
      }
      refills.clear();
      await claimInTurns([...candidates.values()]);
      await keepServing(new Set(candidates.keys()), polled);
    } catch (error) {
      logger.warn({ err: error }, 'looking for webhook deliveries failed; trying again shortly');
    }
  };

  const cycles = repeatCycle(cycle, {
    gatherMs,
    pollMs: () => pollMs,
    onPoll: () => (scanDue = true),
  });

  return {
    poke() {
      scanDue = true;
      cycles.soon();
    },
    async stop() {
      stopping = true;
      await cycles.stop();
      const endpointIds = [...served.keys()];
      const waiting = [...served.values()].flatMap((endpoint) =>
        dequeue(endpoint, endpoint.queue.length),
      );
      await deliveries.release(waiting).catch(() => {});
      stopAttempts.abort();
      await Promise.all([...attempts]);
      await deliveries.stopServing(endpointIds, holder).catch(() => {});
      await client.close();
    },
  };
}
