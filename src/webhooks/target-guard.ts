/**
 * The SSRF guard: a webhook may only reach a global unicast address. The registration check
 * looks at the URL's host and what it resolves to now; the connector makes the same check on the
 * address each delivery actually connects to, since DNS can answer differently later.
 */
import dns from 'node:dns';
import net from 'node:net';
import type { Socket } from 'node:net';
import ipaddr from 'ipaddr.js';
import { buildConnector } from 'undici';

/** ipaddr.js's names for the ranges a target may not be in, said for people. */
const rangeNames: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address',
  uniqueLocal: 'a unique-local address',
  multicast: 'a multicast address',
  unspecified: 'the unspecified address',
  broadcast: 'the broadcast address',
  ipv4Mapped: 'an IPv4-mapped IPv6 address',
  carrierGradeNat: 'a shared (carrier-grade NAT) address',
};

/**
 * Why the address may not be a webhook target, or undefined for a global unicast one. Anything
 * ipaddr.js does not call plain `unicast` is refused: besides the ranges above, documentation,
 * benchmarking and reserved ranges, and IPv6 forms that carry an IPv4 address inside (6to4,
 * Teredo, NAT64), which could lead to an internal one.
 */
export function forbiddenAddress(address: string): string | undefined {
  let range: string;
  try {
    range = ipaddr.parse(address).range();
  } catch {
    return 'not an IP address';
  }
  if (range === 'unicast') return undefined;
  return rangeNames[range] ?? `a reserved address (${range})`;
}

/** A delivery refused by the guard: the target is, or resolved to, an address it may not reach. */
export class TargetRefusedError extends Error {
  readonly code = 'ERR_WEBHOOK_TARGET_REFUSED';
}

const bare = (hostname: string) => (hostname.startsWith('[') ? hostname.slice(1, -1) : hostname);

/** How long a registration waits for DNS before it accepts a host it could not resolve (deliveries check again). */
const registrationLookupMs = 3000;

type Lookup = (hostname: string) => Promise<Array<{ address: string }>>;

export interface TargetGuard {
  /** Whether http and internal addresses are allowed (development and tests). */
  readonly allowsPrivateTargets: boolean;
  /** Why the URL may not be registered (a phrase that follows the field's name), or undefined. */
  refusalOf(url: string): Promise<string | undefined>;
}

export function targetGuard(options: { allowPrivateTargets: boolean; lookup?: Lookup }): TargetGuard {
  const lookup: Lookup = options.lookup ?? ((hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true }));
  return {
    allowsPrivateTargets: options.allowPrivateTargets,
    async refusalOf(url) {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        return 'is not an absolute URL';
      }
      if (parsed.protocol !== 'https:' && !(options.allowPrivateTargets && parsed.protocol === 'http:')) return 'must be an https URL';
      if (options.allowPrivateTargets) return undefined;
      // The URL parser has already spelt numeric hosts (2130706433, 0x7f.1, 017700000001) as addresses.
      const host = bare(parsed.hostname);
      if (net.isIP(host)) {
        const refusal = forbiddenAddress(host);
        return refusal && `has the host ${host}, ${refusal}`;
      }
      let addresses: Array<{ address: string }>;
      try {
        addresses = await Promise.race([
          lookup(host),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error('DNS did not answer in time')), registrationLookupMs).unref()),
        ]);
      } catch {
        // Not resolvable now: nothing to refuse yet, and every delivery is checked where it connects.
        return undefined;
      }
      for (const { address } of addresses) {
        const refusal = forbiddenAddress(address);
        if (refusal) return `has the host ${host}, which resolves to ${address}, ${refusal}`;
      }
      return undefined;
    },
  };
}

/**
 * A DNS lookup for the connector that answers only allowed addresses: a name that resolves to
 * internal addresses alone fails with TargetRefusedError, and one that resolves to both is
 * connected to an allowed one only.
 */
function guardedLookup(hostname: string, options: dns.LookupOptions, callback: (...args: any[]) => void): void {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error);
    const allowed = addresses.filter(({ address }) => forbiddenAddress(address) === undefined);
    if (allowed.length === 0) {
      const [first] = addresses;
      return callback(new TargetRefusedError(`${hostname} resolves to ${first?.address}, ${first && forbiddenAddress(first.address)}`));
    }
    if (options.all) callback(null, allowed);
    else callback(null, allowed[0].address, allowed[0].family);
  });
}

/**
 * undici's connector, guarded unless private targets are allowed: a numeric host is checked
 * before connecting (no lookup is made for one), a name through the guarded lookup, and the
 * socket's remote address once connected, so no delivery talks to an address the guard refuses.
 */
export function guardedConnector(options: { allowPrivateTargets: boolean; timeoutMs: number }): buildConnector.connector {
  if (options.allowPrivateTargets) return buildConnector({ timeout: options.timeoutMs });
  const connect = buildConnector({ timeout: options.timeoutMs, lookup: guardedLookup } as buildConnector.BuildOptions);
  return (connectOptions, callback) => {
    const host = bare(connectOptions.hostname);
    const refusal = net.isIP(host) ? forbiddenAddress(host) : undefined;
    if (refusal) return callback(new TargetRefusedError(`${host} is ${refusal}`), null);
    connect(connectOptions, (error, socket) => {
      if (error) return callback(error, null);
      const remote = (socket as Socket).remoteAddress;
      const refused = remote === undefined ? 'an unknown address' : forbiddenAddress(remote);
      if (refused) {
        socket!.destroy();
        return callback(new TargetRefusedError(`${remote ?? host} is ${refused}`), null);
      }
      callback(null, socket!);
    });
  };
}
