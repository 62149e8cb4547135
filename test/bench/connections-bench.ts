/**
 * `make bench`, abuse part (b): one client address holds as many idle sockets as it may (more
 * than MAX_CONNECTIONS_PER_ADDRESS, sending no headers, each re-opened as the service closes it)
 * while another address (127.0.0.2) sends requests on new connections: all of them must answer,
 * quickly.
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

/** Keeps `count` silent sockets open from 127.0.0.1, opening another whenever one closes. */
function holdIdleSockets(url: string, count: number) {
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
      localAddress: '127.0.0.1',
    });
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

export async function idleSocketsFromOneAddress(
  service: ServerProcess,
  key: string,
  options: { seconds: number; sockets: number; perAddress: number },
): Promise<void> {
  const holder = holdIdleSockets(service.url, options.sockets);
  // Time for the sockets to be accepted (and those past the cap closed) before measuring.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const times: number[] = [];
  let failed = 0;
  const deadline = performance.now() + options.seconds * 1000;
  for (let i = 0; performance.now() < deadline; i++) {
    const path = i % 2 === 0 ? '/healthz' : '/v1/projects?limit=10';
    const ms = await timedRequest(service.url, path, key, '127.0.0.2');
    if (ms === undefined) failed++;
    else times.push(ms);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const opened = holder.opened();
  holder.stop();
  times.sort((a, b) => a - b);
  const p99 = percentile(times, 99);
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
