/**
 * Host name lookups for webhooks, at registration and before each delivery. They ask DNS servers
 * through c-ares (`dns.promises.Resolver`), never `dns.lookup`, whose `getaddrinfo` runs on
 * libuv's four threads that every tenant, the log and zlib share: a tenant decides how slowly its
 * own name server answers, and that must tie up nothing of anyone else's. Each lookup is cut off
 * at its timeout; one tenant runs at most a few at once and the instance a few dozen, tenants
 * taking turns. Answers are kept for their TTL, failures briefly, the most recent few thousand.
 *
 * A host name is looked up once at a time however many ask for it, from the moment it is asked
 * (waiting for its turn included), and one tenant has at most `pendingPerTenant` names waiting or
 * being looked up: before, every attempt that asked again while its name waited queued one more
 * waiter, and a tenant whose name server stopped answering filled the delivery thread's heap.
 */
import { promises as dns, type LookupAddress } from 'node:dns';
import { FairLimiter } from './fair-limiter';
import { keptAnswer, lookupFailure, type KeptAnswer } from './dns-answers';

/** Lookups one tenant may have running at once, at registration and for deliveries together. */
export const lookupsPerTenant = 4;
/** Lookups running at once on the instance. */
const lookupsAtOnce = 32;
/**
 * Host names one tenant may have waiting for a lookup or being looked up, and the instance: past
 * them a lookup fails at once with `EBUSY`, kept for no one. Each is a promise and a few closures
 * (under 1 KB), so the instance's cap holds well under a megabyte of the thread's heap.
 */
export const pendingPerTenant = 64;
const pendingAtOnce = 2048;
/** Hosts whose answers are kept at most; the least recently looked up go first. */
const keptAtMost = 5000;

/** Node's lookup answers in overloads of differing arguments. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- those overloads' arguments
type LookupCallback = (...args: any[]) => void;
export type NetLookup = (
  hostname: string,
  options: { family?: number | string; all?: boolean },
  callback: LookupCallback,
) => void;

export interface HostResolver {
  /** The answer kept for the host, or undefined when none is kept now. */
  kept(hostname: string): KeptAnswer | undefined;
  /**
   * The host's addresses: kept, joined to a lookup running, or looked up in the tenant's turn.
   * Rejects with the lookup's failure (`ENOTFOUND`, `ETIMEOUT`, …) or the signal's reason.
   */
  resolve(hostname: string, tenant: string, signal?: AbortSignal): Promise<LookupAddress[]>;
  /** The same, in the form net.connect takes as its `lookup` (in no tenant's turn: deliveries look up before they connect). */
  lookup: NetLookup;
}

export interface ResolverOptions {
  /** `host:port` of the name servers to ask; the system's when empty. */
  servers: string[];
  /** How long one lookup may take, both address families together. */
  timeoutMs: number;
  /** `localhost` and names under it answer loopback without a query (RFC 6761); only where private targets are allowed. */
  answerLocalhost: boolean;
}

const localhost = /^(.+\.)?localhost\.?$/i;
const loopback: LookupAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

export function createResolver(options: ResolverOptions): HostResolver {
  const answers = new Map<string, KeptAnswer>();
  /** Lookups asked for and not yet answered, waiting for their turn or running, by host name. */
  const pending = new Map<string, Promise<LookupAddress[]>>();
  const pendingFor = new Map<string, number>();
  const limiter = new FairLimiter(lookupsAtOnce, lookupsPerTenant);

  const kept = (hostname: string) => {
    const answer = answers.get(hostname);
    if (answer && answer.until > Date.now()) return answer;
    if (answer) answers.delete(hostname);
    return undefined;
  };
  const keep = (hostname: string, answer: KeptAnswer) => {
    answers.delete(hostname);
    answers.set(hostname, answer);
    if (answers.size > keptAtMost) answers.delete(answers.keys().next().value!);
  };
  const settle = (answer: KeptAnswer) =>
    answer.addresses ? Promise.resolve(answer.addresses) : Promise.reject(answer.error);

  /** One lookup on a resolver of its own, so that its timeout can call it off (cancel() ends every query of a resolver). */
  const lookUp = async (hostname: string): Promise<LookupAddress[]> => {
    const resolver = new dns.Resolver({ timeout: options.timeoutMs, tries: 1 });
    if (options.servers.length > 0) resolver.setServers(options.servers);
    const timer = setTimeout(() => resolver.cancel(), options.timeoutMs);
    try {
      const [v4, v6] = await Promise.allSettled([
        resolver.resolve4(hostname, { ttl: true }),
        resolver.resolve6(hostname, { ttl: true }),
      ]);
      const answer = keptAnswer(hostname, v4, v6, Date.now());
      keep(hostname, answer);
      return settle(answer);
    } finally {
      clearTimeout(timer);
    }
  };

  const resolve: HostResolver['resolve'] = (hostname, tenant, signal) => {
    if (options.answerLocalhost && localhost.test(hostname)) return Promise.resolve(loopback);
    const answer = kept(hostname);
    if (answer) return settle(answer);
    let lookup = pending.get(hostname);
    if (lookup === undefined) {
      const count = pendingFor.get(tenant) ?? 0;
      if (count >= pendingPerTenant || pending.size >= pendingAtOnce)
        return Promise.reject(
          lookupFailure('EBUSY', `too many host names are being looked up to look up ${hostname}`),
        );
      pendingFor.set(tenant, count + 1);
      // Not called off when a caller's signal aborts: others may have joined it, and it is bounded.
      lookup = limiter
        .acquire(tenant)
        .then((release) => lookUp(hostname).finally(release))
        .finally(() => {
          pending.delete(hostname);
          const left = pendingFor.get(tenant)! - 1;
          if (left === 0) pendingFor.delete(tenant);
          else pendingFor.set(tenant, left);
        });
      pending.set(hostname, lookup);
    }
    return signal ? untilAborted(lookup, signal) : lookup;
  };

  return {
    kept,
    resolve,
    lookup(hostname, lookupOptions, callback) {
      resolve(hostname, '').then(
        (all) => {
          const family = Number(String(lookupOptions.family ?? 0).replace('IPv', ''));
          const addresses =
            family === 4 || family === 6 ? all.filter((a) => a.family === family) : all;
          if (addresses.length === 0)
            return callback(lookupFailure('ENOTFOUND', `no IPv${family} address for ${hostname}`));
          if (lookupOptions.all) callback(null, addresses);
          else callback(null, addresses[0].address, addresses[0].family);
        },
        (error: unknown) => callback(error),
      );
    },
  };
}

/** The promise's value, or the signal's reason once it aborts, whichever comes first. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
