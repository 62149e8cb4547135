/**
 * The SSRF guard: a webhook may only reach a global unicast address. The registration check
 * looks at the URL's host and what it resolves to now; the connector makes the same check on the
 * address each delivery actually connects to, since DNS can answer differently later. What a
 * host name resolved to is never said, only that it is not allowed: a refusal must not turn the
 * guard into a way to read internal DNS.
 */
import type dns from 'node:dns';
import net from 'node:net';
import type { Socket } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { buildConnector } from 'undici';
import type { HostResolver, NetLookup } from './dns-lookups';

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
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return 'not an IP address';
  }
  const range = parsed.range();
  if (range !== 'unicast') return rangeNames[range] ?? `a reserved address (${range})`;
  if (parsed instanceof ipaddr.IPv6 && parsed.match(ipv4Compatible))
    return ipv4CompatibleRefusal(parsed);
  return undefined;
}

/**
 * ::a.b.c.d, the deprecated IPv4-compatible form (RFC 4291), which ipaddr.js calls unicast (:: and
 * ::1 aside) though a stack may still reach the IPv4 address inside. It is refused as that address
 * would be (`::127.0.0.1` as a loopback address), and otherwise as being no global unicast address.
 */
const ipv4Compatible = ipaddr.IPv6.parseCIDR('::/96');

function ipv4CompatibleRefusal(address: ipaddr.IPv6): string {
  const inside = ipaddr.fromByteArray(address.toByteArray().slice(12)).toString();
  return forbiddenAddress(inside) ?? 'an IPv4-compatible IPv6 address';
}

/** A delivery refused by the guard: the target is, or resolved to, an address it may not reach. */
export class TargetRefusedError extends Error {
  readonly code = 'ERR_WEBHOOK_TARGET_REFUSED';
}

const bare = (hostname: string) => (hostname.startsWith('[') ? hostname.slice(1, -1) : hostname);

/** Said of a host name whose address is refused, in place of the address. */
const refusedName = 'resolves to an address that is not allowed';

/**
 * Whether the URL names user information (`user:pass@`, `user@`, even an empty `@`), which the
 * parsed URL does not show when it is empty: credentials have no place in a webhook URL, where
 * they would be stored and shown back with it.
 */
const hasUserInfo = (url: string, parsed: URL) =>
  parsed.username !== '' ||
  parsed.password !== '' ||
  /^[a-z][a-z0-9+.-]*:[\\/]*[^\\/?#]*@/i.test(url.trim());

/** Whether the port may be a webhook target's: 443, or 1024–65535 (and 80 where http is allowed); never a well-known service's port. */
export function allowedPort(url: URL, allowHttp: boolean): boolean {
  if (url.port === '') return true; // the scheme's own: 443, or 80 for http
  const port = Number(url.port);
  return port === 443 || port >= 1024 || (allowHttp && port === 80);
}

/** `localhost`, names under it (RFC 6761), and any name spelt with a trailing dot (`localhost.`), refused like loopback addresses. */
const localName = /(^|\.)localhost\.?$|\.$/i;

export interface TargetGuard {
  /** Whether http and internal addresses are allowed (development and tests). */
  readonly allowsPrivateTargets: boolean;
  /** Why the URL may not be registered by the tenant (a phrase that follows the field's name), or undefined. */
  refusalOf(url: string, tenantId: string): Promise<string | undefined>;
}

export function targetGuard(options: {
  allowPrivateTargets: boolean;
  resolver: Pick<HostResolver, 'resolve'>;
  /** How long a registration waits for its host's lookup (its turn among the tenant's lookups included). */
  lookupTimeoutMs: number;
}): TargetGuard {
  const { allowPrivateTargets, resolver, lookupTimeoutMs } = options;
  return {
    allowsPrivateTargets: allowPrivateTargets,
    async refusalOf(url, tenantId) {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        return 'is not an absolute URL';
      }
      if (parsed.protocol !== 'https:' && !(allowPrivateTargets && parsed.protocol === 'http:'))
        return parsed.protocol === 'http:'
          ? 'must be an https URL; plain http and private addresses are allowed only where the service runs with WEBHOOK_ALLOW_PRIVATE_TARGETS=true, as make sandbox does'
          : `must be an https URL, not ${parsed.protocol.slice(0, 20)}`;
      if (hasUserInfo(url, parsed)) return 'must not contain user information (user:password@)';
      if (!allowedPort(parsed, allowPrivateTargets))
        return `has the port ${parsed.port}: a webhook port is 443 or from 1024 to 65535${allowPrivateTargets ? ' (or 80 for http)' : ''}`;
      // The URL parser has already spelt numeric hosts (2130706433, 0x7f.1, 017700000001) as addresses.
      const host = bare(parsed.hostname);
      if (net.isIP(host)) {
        const refusal = allowPrivateTargets ? undefined : forbiddenAddress(host);
        return refusal && `has the host ${host}, ${refusal}`;
      }
      if (!allowPrivateTargets && localName.test(host))
        return `has the host ${host}, which ${refusedName}`;
      let addresses: Array<{ address: string }>;
      try {
        addresses = await resolver.resolve(host, tenantId, AbortSignal.timeout(lookupTimeoutMs));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // A name that does not exist (yet) is no reason to refuse: every delivery is checked where it connects.
        if (code !== 'ETIMEOUT' && (error as Error).name !== 'TimeoutError') return undefined;
        return `has the host ${host}, which could not be resolved in time (its name server did not answer within ${lookupTimeoutMs / 1000} s); try again, or check the name's DNS`;
      }
      // Looked up where private targets are allowed too: a name that cannot be resolved in time is refused everywhere.
      if (allowPrivateTargets) return undefined;
      for (const { address } of addresses) {
        const refusal = forbiddenAddress(address);
        if (refusal) return `has the host ${host}, which ${refusedName}`;
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
function guardedLookup(lookup: NetLookup): NetLookup {
  return (hostname, options, callback) =>
    lookup(
      hostname,
      { ...options, all: true },
      (error: unknown, addresses: dns.LookupAddress[]) => {
        if (error) return callback(error);
        const allowed = addresses.filter(({ address }) => forbiddenAddress(address) === undefined);
        if (allowed.length === 0)
          return callback(new TargetRefusedError(`${hostname} ${refusedName}`));
        if (options.all) callback(null, allowed);
        else callback(null, allowed[0].address, allowed[0].family);
      },
    );
}

/**
 * undici's connector, making its lookups through `lookup` (bounded and remembered), and guarded
 * unless private targets are allowed: a numeric host is checked before connecting (no lookup is
 * made for one), a name through the guarded lookup, and the socket's remote address once
 * connected, so no delivery talks to an address the guard refuses.
 */
export function guardedConnector(options: {
  allowPrivateTargets: boolean;
  timeoutMs: number;
  lookup: NetLookup;
}): buildConnector.connector {
  // Loaded with the delivery client (see http-client.ts), not with the guard the requests use.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded with the delivery client
  const { buildConnector } = require('undici') as typeof import('undici');
  if (options.allowPrivateTargets)
    return buildConnector({
      timeout: options.timeoutMs,
      lookup: options.lookup,
    } as buildConnector.BuildOptions);
  const connect = buildConnector({
    timeout: options.timeoutMs,
    lookup: guardedLookup(options.lookup),
  } as buildConnector.BuildOptions);
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
        return callback(new TargetRefusedError(`${host} ${refusedName}`), null);
      }
      callback(null, socket!);
    });
  };
}
