/**
 * What one client address may hold, so that one address never takes what all share
 * (MAX_CONNECTIONS): connections per socket address, closed as they are accepted past the cap,
 * as MAX_CONNECTIONS closes its own. Sockets from the proxies TRUST_PROXY names carry many
 * clients each and are not counted; behind them a client is known only once its headers are
 * parsed, so each forwarded address gets as many requests in progress instead, and one more is
 * answered 429 (the proxy's connection stays open for its other clients).
 */
import type http from 'node:http';
import type { Socket } from 'node:net';
import { ProblemError } from '../errors';

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
    if (!connections.take(address)) {
      socket.destroy();
      return;
    }
    socket.once('close', () => connections.give(address));
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
