/**
 * Which secrets sign an endpoint's deliveries, and what a rotation does to them: small pure rules
 * for the endpoints' repository. A secret replaced by a rotation keeps signing until 24 hours
 * after its replacement, so receivers switch over at their pace; 5 rotations in 24 hours are the
 * most an endpoint takes, so the signatures a delivery carries stay few.
 */
import { ProblemError } from '../errors';
import { fromDbTimestamp, toDbTimestamp, type DbTimestamp } from '../db/timestamps';

/** How long a replaced secret keeps signing beside the newer ones. */
export const retiredSigningMs = 24 * 3_600_000;
/** Rotations an endpoint takes in 24 hours. */
export const rotationsPerDay = 5;

/** A replaced secret, signing until `until`. */
export interface RetiredSecret {
  secret: string;
  until: DbTimestamp;
}

/** The columns that hold an endpoint's secrets. */
export interface SecretColumns {
  secret: string;
  /** Every replaced secret still signing, newest first (JSON); null before the first rotation. */
  retired_secrets?: string | null;
  /** The newest replaced secret alone, as versions before retired_secrets read it. */
  previous_secret: string | null;
  previous_secret_until: DbTimestamp | null;
}

/** The replaced secrets still signing at `now`, newest first. */
export function retiredSecrets(row: SecretColumns, now: DbTimestamp): RetiredSecret[] {
  const retired: RetiredSecret[] =
    row.retired_secrets != null
      ? (JSON.parse(row.retired_secrets) as RetiredSecret[])
      : row.previous_secret !== null && row.previous_secret_until !== null
        ? [{ secret: row.previous_secret, until: row.previous_secret_until }]
        : [];
  return retired.filter(({ until }) => until > now);
}

/** The secrets that sign a delivery at `now`: the current one first. */
export function signingSecrets(row: SecretColumns, now: DbTimestamp): string[] {
  return [row.secret, ...retiredSecrets(row, now).map(({ secret }) => secret)];
}

/** The longest Retry-After the document allows; a client asks again then, and is told the rest. */
const longestRetryAfterSeconds = 3600;

/** The endpoint has had its rotations for these 24 hours. */
export class RotationsLimitError extends ProblemError {
  constructor(secondsUntilNext: number) {
    super(
      'rate-limited',
      `This webhook endpoint's secret has been rotated ${rotationsPerDay} times in the last 24 hours; the next rotation is allowed in ${secondsUntilNext} seconds.`,
      { headers: { 'Retry-After': String(Math.min(secondsUntilNext, longestRetryAfterSeconds)) } },
    );
  }
}

/** The columns after `secret` replaces the current one at `nowMs`; RotationsLimitError past the limit. */
export function rotation(row: SecretColumns, secret: string, nowMs: number): SecretColumns {
  const now = toDbTimestamp(new Date(nowMs).toISOString());
  const still = retiredSecrets(row, now);
  if (still.length >= rotationsPerDay) {
    const oldest = Date.parse(fromDbTimestamp(still[still.length - 1].until));
    throw new RotationsLimitError(Math.max(1, Math.ceil((oldest - nowMs) / 1000)));
  }
  const retired = [
    { secret: row.secret, until: toDbTimestamp(new Date(nowMs + retiredSigningMs).toISOString()) },
    ...still,
  ];
  return {
    secret,
    retired_secrets: JSON.stringify(retired),
    previous_secret: retired[0].secret,
    previous_secret_until: retired[0].until,
  };
}
