/**
 * `make bench`, abuse part (b): one client address holds as many idle sockets as it may (more
 * than MAX_CONNECTIONS_PER_ADDRESS, sending no headers, each re-opened as the service closes it)
 * while another address (127.0.0.2) sends requests on new connections: all of them must answer,
 * quickly. And (e): twelve addresses (127.0.0.3 to .14), each within its own cap, together past
 * MAX_CONNECTIONS, hold sockets that send half a request's headers and no more, against the same.
 */
import http from 'node:http';
import net from 'node:net';
import type { ServerProcess } from './processes';
import { fmt, mark } from './report';

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** A request on a new connection from `localAddress`: its time in ms, or undefined when it failed. */
function timedRequest(
  url: string,
  path: string,
  key: string,
  localAddress: string,
): Promise<number | undefined> {
  const started = performance.now();
  return new Promise((resolve) => {
    const request = http.get(
      `${url}${path}`,
      {
        localAddress,
        agent: false,
        headers: { Authorization: `Bearer ${key}`, Connection: 'close' },
        timeout: 5000,
      },
      (response) => {
        response.resume();
        response.on('end', () =>
          resolve(response.statusCode === 200 ? performance.now() - started : undefined),
        );
      },
    );
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(undefined));
  });
}

/** Keeps `count` sockets open from `localAddress`, each sending `first` and no more, opening another whenever one closes. */
function holdIdleSockets(url: string, count: number, localAddress = '127.0.0.1', first = '') {
  const { port } = new URL(url);
  let stopped = false;
  let opened = 0;
  const open = new Set<net.Socket>();
  const openOne = () => {
    if (stopped) return;
    opened++;
    const socket = net.connect({
      port: Number(port),
      host: '127.0.0.1',
      localAddress,
    });
    if (first) socket.write(first);
    open.add(socket);
    socket.on('error', () => {});
    // Re-opened after a pause, so the sockets past the cap cost the bench's CPU less than the service's.
    socket.on('close', () => {
      open.delete(socket);
      setTimeout(openOne, 200);
    });
  };
  for (let i = 0; i < count; i++) openOne();
  return {
    opened: () => opened,
    stop() {
      stopped = true;
      for (const socket of open) socket.destroy();
    },
  };
}

/** Requests from 127.0.0.2 on new connections for `seconds`: their times, and how many failed. */
async function probe(service: ServerProcess, key: string, seconds: number) {
  const times: number[] = [];
  let failed = 0;
  const deadline = performance.now() + seconds * 1000;
  for (let i = 0; performance.now() < deadline; i++) {
    const path = i % 2 === 0 ? '/healthz' : '/v1/projects?limit=10';
    const ms = await timedRequest(service.url, path, key, '127.0.0.2');
    if (ms === undefined) failed++;
    else times.push(ms);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  times.sort((a, b) => a - b);
  return { times, failed, p99: percentile(times, 99) };
}

export async function idleSocketsFromOneAddress(
  service: ServerProcess,
  key: string,
  options: { seconds: number; sockets: number; perAddress: number },
): Promise<void> {
  const holder = holdIdleSockets(service.url, options.sockets);
  // Time for the sockets to be accepted (and those past the cap closed) before measuring.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const { times, failed, p99 } = await probe(service, key, options.seconds);
  const opened = holder.opened();
  holder.stop();
  console.log(
    `\n## (b) One address holding idle sockets (${options.sockets} kept open, MAX_CONNECTIONS_PER_ADDRESS ${options.perAddress}) while another sends /healthz and a list on new connections, ${options.seconds} s\n`,
  );
  console.log(
    `- the holder opened ${opened} sockets in all (those past its cap closed as accepted, and opened again)`,
  );
  console.log(
    `- the other address: ${times.length} of ${times.length + failed} answered (all: ${mark(failed === 0)}); p50 ${fmt(percentile(times, 50), 1)} ms, p99 ${fmt(p99, 1)} ms (< 50: ${mark(p99 < 50)})`,
  );
}

export async function halfOpenFromManyAddresses(
  service: ServerProcess,
  key: string,
  options: { seconds: number; addresses: number; perAddress: number; maxConnections: number },
): Promise<void> {
  const holders = Array.from({ length: options.addresses }, (_, i) =>
    holdIdleSockets(
      service.url,
      options.perAddress,
      `127.0.0.${3 + i}`,
      'GET /healthz HTTP/1.1\r\nHost: x\r\n',
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const { times, failed, p99 } = await probe(service, key, options.seconds);
  const opened = holders.reduce((sum, holder) => sum + holder.opened(), 0);
  for (const holder of holders) holder.stop();
  console.log(
    `\n## (e) ${options.addresses} addresses × ${options.perAddress} half-open sockets (MAX_CONNECTIONS ${options.maxConnections}) while another address sends /healthz and a list on new connections, ${options.seconds} s\n`,
  );
  console.log(`- the holders opened ${opened} sockets in all (the oldest shed, and opened again)`);
  console.log(
    `- the other address: ${times.length} of ${times.length + failed} answered (all: ${mark(failed === 0)}); p50 ${fmt(percentile(times, 50), 1)} ms, p99 ${fmt(p99, 1)} ms (< 50: ${mark(p99 < 50)})`,
  );
}
