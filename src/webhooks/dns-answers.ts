/**
 * How long a lookup's answer is kept, and what it says when it found nothing: small pure rules
 * for dns-lookups.ts. An answer is kept for its records' TTL, at least long enough for the
 * delivery that asked to connect with it, and never so long that a changed record goes unseen
 * for hours; a failure is kept briefly, so a name server that never answers is asked again soon
 * but not by every attempt.
 */
import type { LookupAddress } from 'node:dns';
import type { RecordWithTtl } from 'node:dns';

/** An answer is kept at least this long, whatever its TTL (0 included). */
export const minKeepMs = 5_000;
/** And at most this long. */
export const maxKeepMs = 300_000;
/** A failure (no such name, no answer in time, a refusing server) is kept this long. */
export const failureKeepMs = 5_000;
/**
 * Addresses kept of one answer, the first ones: a connection tries the first, and a name whose
 * server answers hundreds would otherwise hold that much in each of the thousands of answers kept.
 */
export const addressesKeptAtMost = 16;

export interface KeptAnswer {
  addresses?: LookupAddress[];
  error?: NodeJS.ErrnoException;
  /** When it stops being used (epoch milliseconds). */
  until: number;
}

/** An error in the shape Node's lookups fail with. */
export function lookupFailure(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

/** Codes that say the name has no address of that family: not a failure while the other family has one. */
const noAddress = new Set(['ENODATA', 'ENOTFOUND']);

/** What the A and AAAA queries of one lookup say together, and until when it is kept. */
export function keptAnswer(
  hostname: string,
  v4: PromiseSettledResult<RecordWithTtl[]>,
  v6: PromiseSettledResult<RecordWithTtl[]>,
  now: number,
): KeptAnswer {
  const records = [
    ...(v4.status === 'fulfilled' ? v4.value.map((r) => ({ ...r, family: 4 })) : []),
    ...(v6.status === 'fulfilled' ? v6.value.map((r) => ({ ...r, family: 6 })) : []),
  ];
  if (records.length > 0) {
    const ttlMs = Math.min(...records.map((r) => r.ttl * 1000));
    return {
      addresses: records
        .slice(0, addressesKeptAtMost)
        .map(({ address, family }) => ({ address, family })),
      until: now + Math.min(maxKeepMs, Math.max(minKeepMs, ttlMs)),
    };
  }
  const codes = [v4, v6].map((r) =>
    r.status === 'rejected' ? String((r.reason as NodeJS.ErrnoException).code) : 'ENODATA',
  );
  const failed = codes.find((code) => !noAddress.has(code));
  const error =
    failed === undefined
      ? lookupFailure('ENOTFOUND', `${hostname} has no address`)
      : failed === 'ETIMEOUT' || failed === 'ECANCELLED'
        ? lookupFailure('ETIMEOUT', `the name server did not answer for ${hostname} in time`)
        : lookupFailure(failed, `looking up ${hostname} failed (${failed})`);
  return { error, until: now + failureKeepMs };
}
