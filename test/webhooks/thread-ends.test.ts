/** The rules for a delivery thread's ends: their causes, and which tenant three in a row point at. */
import {
  endsBeforePause,
  endsInARow,
  rowBrokenAfterMs,
  tenantToPause,
  restartAfterMs,
  restartDelayMs,
  diedAtOnceMs,
  threadEndCause,
  type ThreadEnd,
} from '../../src/webhooks/thread-ends';

const end = (busiest: string | undefined, ranMs = 2000): ThreadEnd => ({ busiest, ranMs });
const row = (...ends: ThreadEnd[]) => ends.reduce<ThreadEnd[]>(endsInARow, []);

it('names the cause of an end from the error the thread reported', () => {
  expect(
    threadEndCause(Object.assign(new Error('oom'), { code: 'ERR_WORKER_OUT_OF_MEMORY' })),
  ).toBe('out_of_memory');
  expect(threadEndCause(new TypeError('x is undefined'))).toBe('error');
  expect(threadEndCause(undefined)).toBe('exit');
});

it('pauses the tenant that held the most at each of three ends in a row, and no other', () => {
  expect(endsBeforePause).toBe(3);
  expect(tenantToPause(row(end('a'), end('a')))).toBeUndefined();
  expect(tenantToPause(row(end('a'), end('a'), end('a')))).toBe('a');
  expect(tenantToPause(row(end('b'), end('a'), end('a'), end('a')))).toBe('a');
  expect(tenantToPause(row(end('a'), end('b'), end('a')))).toBeUndefined();
  expect(tenantToPause(row(end('a'), end(undefined), end('a')))).toBeUndefined();
  expect(tenantToPause(row(end(undefined), end(undefined), end(undefined)))).toBeUndefined();
});

it('starts a new row at the end of a thread that ran long, and keeps no more ends than it needs', () => {
  expect(tenantToPause(row(end('a'), end('a'), end('a', rowBrokenAfterMs)))).toBeUndefined();
  expect(row(end('a'), end('a'), end('a', rowBrokenAfterMs))).toHaveLength(1);
  expect(row(...Array.from({ length: 50 }, () => end('a')))).toHaveLength(endsBeforePause);
});

it('starts a thread again at once, but a second later when it died at once, so that a thread that cannot run does not spin', () => {
  expect(restartAfterMs(diedAtOnceMs)).toBe(0);
  expect(restartAfterMs(60_000)).toBe(0);
  expect(restartAfterMs(diedAtOnceMs - 1)).toBe(restartDelayMs);
  expect(restartAfterMs(0)).toBeGreaterThanOrEqual(1000);
});
