/**
 * Host name lookups for deliveries: a few at once, shared and remembered briefly. dns.lookup
 * runs on libuv's thread pool (four threads, shared with fs and zlib) and cannot be called off,
 * so a lookup counts against the limit until it really ends, whatever became of the attempt that
 * asked for it. Waiters take turns by queue (the tenant), so one tenant's slow names do not hold
 * up another's.
 */
import dns, { type LookupAddress } from 'node:dns';
import { FairLimiter } from './fair-limiter';

/** Lookups running at once: half the thread pool, the rest left to fs and zlib. */
const lookupsAtOnce = 2;
/** How long an answer (or a failure) is used again without a new lookup. */
const rememberMs = 5000;
/** Answers remembered at most; the oldest go first. */
const rememberedAtMost = 1000;

/** Node's lookup answers in overloads of differing arguments. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- those overloads' arguments
type LookupCallback = (...args: any[]) => void;
export type NetLookup = (
  hostname: string,
  options: dns.LookupOptions,
  callback: LookupCallback,
) => void;

export interface Resolver {
  /**
   * The host's addresses: remembered, joined to a lookup already running, or looked up in turn for
   * `queue`. `ended` settles once the lookup it waited on has ended (or at once when it waited on none).
   */
  resolve(
    hostname: string,
    queue: string,
    signal?: AbortSignal,
  ): { addresses: Promise<LookupAddress[]>; ended: Promise<void> };
  /** The same, in the form net.connect takes as its `lookup`. */
  lookup: NetLookup;
}

const noop = () => {};

export function createResolver(): Resolver {
  const remembered = new Map<
    string,
    { at: number; addresses?: LookupAddress[]; error?: unknown }
  >();
  const running = new Map<string, Promise<LookupAddress[]>>();
  const limiter = new FairLimiter(lookupsAtOnce);

  const recall = (hostname: string) => {
    const known = remembered.get(hostname);
    if (known && Date.now() - known.at < rememberMs) return known;
    if (known) remembered.delete(hostname);
    return undefined;
  };
  const remember = (hostname: string, answer: { addresses?: LookupAddress[]; error?: unknown }) => {
    remembered.delete(hostname);
    remembered.set(hostname, { at: Date.now(), ...answer });
    if (remembered.size > rememberedAtMost) remembered.delete(remembered.keys().next().value!);
  };
  const answerOf = (known: { addresses?: LookupAddress[]; error?: unknown }) =>
    known.addresses ? Promise.resolve(known.addresses) : Promise.reject(known.error);

  const lookUp = (hostname: string, release: () => void): Promise<LookupAddress[]> => {
    const answer = new Promise<LookupAddress[]>((resolve, reject) =>
      dns.lookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
        error ? reject(error) : resolve(addresses),
      ),
    );
    running.set(hostname, answer);
    answer
      .then(
        (addresses) => remember(hostname, { addresses }),
        (error: unknown) => remember(hostname, { error }),
      )
      .finally(() => {
        running.delete(hostname);
        release();
      });
    return answer;
  };

  const resolve: Resolver['resolve'] = (hostname, queue, signal) => {
    const known = recall(hostname);
    if (known) return { addresses: answerOf(known), ended: Promise.resolve() };
    const joined = running.get(hostname);
    const addresses =
      joined ??
      limiter.acquire(queue, signal).then((release) => {
        // Another waiter may have looked the name up meanwhile.
        const now = recall(hostname);
        const already = running.get(hostname);
        if (now || already) release();
        return now ? answerOf(now) : (already ?? lookUp(hostname, release));
      });
    return { addresses, ended: addresses.then(noop, noop) };
  };

  return {
    resolve,
    lookup(hostname, options, callback) {
      resolve(hostname, '').addresses.then(
        (all) => {
          const addresses =
            options.family === 4 || options.family === 6
              ? all.filter((a) => a.family === options.family)
              : all;
          if (addresses.length === 0)
            return callback(
              Object.assign(new Error(`no address of family ${options.family} for ${hostname}`), {
                code: 'ENOTFOUND',
              }),
            );
          if (options.all) callback(null, addresses);
          else callback(null, addresses[0].address, addresses[0].family);
        },
        (error: unknown) => callback(error),
      );
    },
  };
}
