/**
 * What one client address may hold, so that one address never takes what all share
 * (MAX_CONNECTIONS): connections per socket address (an IPv6 client per /64, the block one
 * client is given), closed as they are accepted past the cap. Sockets from the proxies
 * TRUST_PROXY names carry many clients each and are not counted; behind them a client is known
 * only once its headers are parsed, so each forwarded address gets as many requests in progress
 * instead, and one more is answered 429 (the proxy's connection stays open for its other clients).
 *
 * MAX_CONNECTIONS itself is kept by shedding: at the cap, the connection idle longest (no request
 * in progress: headers not yet all sent, or kept alive between requests) is closed to make room,
 * so many addresses' half-open sockets never keep out a client that sends its request.
 */
import type http from 'node:http';
import type { Socket } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ProblemError } from '../errors';

/** What a client address is counted as: itself, or for IPv6 its /64 (IPv4-mapped IPv6 as the IPv4 address). */
export function addressKey(address: string): string {
  if (!address.includes(':')) return address;
  try {
    const parsed = ipaddr.IPv6.parse(address);
    if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString();
    return `${parsed.parts
      .slice(0, 4)
      .map((part) => part.toString(16))
      .join(':')}::/64`;
  } catch {
    return address;
  }
}

/** Express's compiled 'trust proxy': whether the address at this hop is a proxy vouched for. */
export type TrustsProxy = (address: string, hop: number) => boolean;

/** Counts per address, each entry removed when it falls back to nothing. */
function addressCounts(cap: number) {
  const counts = new Map<string, number>();
  return {
    /** Takes a place for the address; false when it holds the cap already. */
    take(address: string): boolean {
      const held = counts.get(address) ?? 0;
      if (held >= cap) return false;
      counts.set(address, held + 1);
      return true;
    },
    give(address: string): void {
      const held = (counts.get(address) ?? 1) - 1;
      if (held === 0) counts.delete(address);
      else counts.set(address, held);
    },
  };
}

/** Closes each connection past `perAddress` from one address, proxies' excepted; 0: no cap. */
export function capConnectionsPerAddress(
  server: http.Server,
  perAddress: number,
  trustsProxy: TrustsProxy,
): void {
  if (perAddress === 0) return;
  const connections = addressCounts(perAddress);
  // Ahead of the HTTP server's own listener: a refused socket is closed before a parser is set up for it.
  server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || trustsProxy(address, 0)) return;
    const key = addressKey(address);
    if (!connections.take(key)) {
      socket.destroy();
      return;
    }
    socket.once('close', () => connections.give(key));
  });
}

/**
 * Holds the server to `maxConnections` (0: no cap) by closing, when one more arrives, the
 * connection idle longest; a new connection is refused only when every other one has a request
 * in progress. Must be set up before capConnectionsPerAddress, whose refusals it then never sees.
 */
export function shedIdleConnections(server: http.Server, maxConnections: number): void {
  if (maxConnections === 0) return;
  let open = 0;
  /** Connections with no request in progress, the longest idle first. */
  const idle = new Set<Socket>();
  server.prependListener('connection', (socket: Socket) => {
    if (socket.destroyed) return;
    open++;
    idle.add(socket);
    socket.once('close', () => {
      open--;
      idle.delete(socket);
    });
    if (open > maxConnections) idle.values().next().value!.destroy();
  });
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const { socket } = req;
    idle.delete(socket);
    res.once('close', () => {
      if (!socket.destroyed) idle.add(socket);
    });
  });
}

/**
 * For a request that came through a trusted proxy: takes one of its client's places, given back
 * when the response closes. Throws a 429 problem when the client holds them all. Requests
 * straight from their client are not counted here: their connections are.
 */
export function requestsInProgressPerClient(perAddress: number) {
  const requests = addressCounts(perAddress);
  return (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    clientAddress: string,
    trustsProxy: TrustsProxy,
  ): void => {
    const socketAddress = req.socket.remoteAddress;
    if (perAddress === 0 || socketAddress === undefined || !trustsProxy(socketAddress, 0)) return;
    if (!requests.take(clientAddress)) {
      throw new ProblemError(
        'rate-limited',
        `This client address has ${perAddress} requests in progress, as many as one address may; try again once one has answered.`,
        { headers: { 'Retry-After': '1' } },
      );
    }
    res.once('close', () => requests.give(clientAddress));
  };
}
