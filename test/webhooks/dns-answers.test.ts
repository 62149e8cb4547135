/** How long a lookup's answer is kept, and what a lookup that found nothing says: pure rules. */
import type { RecordWithTtl } from 'node:dns';
import {
  addressesKeptAtMost,
  failureKeepMs,
  keptAnswer,
  maxKeepMs,
  minKeepMs,
} from '../../src/webhooks/dns-answers';

const now = 1_000_000;
const found = (ttl: number, address = '93.184.215.14') => ({
  status: 'fulfilled' as const,
  value: [{ address, ttl }],
});
const failed = (code: string) => ({
  status: 'rejected' as const,
  reason: Object.assign(new Error(code), { code }),
});

it('keeps an answer for its shortest TTL, never less than the least nor more than the most', () => {
  expect(keptAnswer('h', found(60), found(30, '2606:4700::1111'), now)).toEqual({
    addresses: [
      { address: '93.184.215.14', family: 4 },
      { address: '2606:4700::1111', family: 6 },
    ],
    until: now + 30_000,
  });
  expect(keptAnswer('h', found(0), failed('ENODATA'), now).until).toBe(now + minKeepMs);
  expect(keptAnswer('h', found(86_400), failed('ENODATA'), now).until).toBe(now + maxKeepMs);
});

it('answers with the family that has addresses when the other timed out', () => {
  expect(keptAnswer('h', found(60), failed('ETIMEOUT'), now).addresses).toEqual([
    { address: '93.184.215.14', family: 4 },
  ]);
});

it('says a name with no address is not found, and a lookup cut off timed out, kept briefly', () => {
  const none = keptAnswer('h', failed('ENOTFOUND'), failed('ENODATA'), now);
  expect([none.error?.code, none.until]).toEqual(['ENOTFOUND', now + failureKeepMs]);
  expect(keptAnswer('h', failed('ECANCELLED'), failed('ECANCELLED'), now).error?.code).toBe(
    'ETIMEOUT',
  );
  expect(keptAnswer('h', failed('ESERVFAIL'), failed('ENODATA'), now).error?.code).toBe(
    'ESERVFAIL',
  );
});

it('keeps the first addresses of an answer that has very many', () => {
  const many = (ttl: number): PromiseSettledResult<RecordWithTtl[]> => ({
    status: 'fulfilled',
    value: Array.from({ length: 300 }, (_, i) => ({ address: `10.0.${i >> 8}.${i & 255}`, ttl })),
  });
  const kept = keptAnswer('h', many(60), failed('ENODATA'), now).addresses!;
  expect(kept).toHaveLength(addressesKeptAtMost);
  expect(kept[0]).toEqual({ address: '10.0.0.0', family: 4 });
});
