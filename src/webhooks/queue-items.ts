/**
 * What the delivery queue hands the worker (claimed attempts, endpoints with attempts due) and
 * takes back (outcomes): shared by the queue's SQL and its outcomes, so neither imports the other.
 */
import type { components } from '../../generated/api';

type EventType = components['schemas']['EventType'];

/**
 * An attempt this instance has claimed, with what making it needs but its event, which is read
 * just before the attempt is made (a claimed attempt waiting for its turn holds no event body).
 */
export interface ClaimedDelivery {
  deliveryId: string;
  /** The claim: the outcome is written only while the row is still under it. */
  claim: string;
  /** When the claim runs out at the soonest (epoch milliseconds): past it another claim may make the attempt. */
  leaseUntil: number;
  endpointId: string;
  tenantId: string;
  url: string;
  /** The secrets that sign it: the current one, then those replaced in the last 24 hours. */
  secrets: string[];
  /** Whether the endpoint's attempts were failing when it was claimed. */
  endpointFailing: boolean;
  eventId: string;
  eventType: EventType;
  attempt: number;
  /** The endpoint's API version when the attempt was claimed: the event is given in it. */
  apiVersion: string;
}

/** An attempt's event as it is sent: its JSON as the feed shows it, and when it was made (ISO). */
export interface EventToSend {
  json: string;
  createdAt: string;
}

/** An endpoint with due attempts that an instance may serve. */
export interface DueEndpoint {
  endpointId: string;
  tenantId: string;
}

/** Why an endpoint is disabled by its deliveries. */
export type DisabledReason = 'gone' | 'failing';

/** What an attempt's outcome does to its endpoint. */
export interface EndpointHealthChange {
  /** The endpoint's run of failures ends (it was failing, and this attempt succeeded). */
  recovers: boolean;
  /** A run of failures begins now (it was not failing, and this attempt failed). */
  startsFailing: boolean;
  /**
   * Disable the endpoint: at once (gone), or only if its run of failures began at `failingBefore`
   * or earlier (failing).
   */
  disable?: { reason: 'gone' } | { reason: 'failing'; failingBefore: Date };
}

export interface DeliveryOutcome {
  succeeded: boolean;
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
  /** When the next attempt is planned; none when the schedule is spent (or on success). */
  retryAt?: Date;
  endpoint: EndpointHealthChange;
}

/** A success to write with others: its endpoint recovers when it was failing. */
export interface DeliverySuccess {
  delivery: ClaimedDelivery;
  responseStatus: number;
  durationMs: number;
  recovers: boolean;
}
