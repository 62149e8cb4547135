/**
 * The webhooks bench's receiver, in a thread of its own so that it answers at once whatever the
 * writers in the bench's main thread are doing: 204 to every request, noting when each event
 * reached each endpoint (on the main thread's clock) and how many arrived more than once.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

const { counts, mainTimeOrigin } = workerData as { counts: Int32Array; mainTimeOrigin: number };
/** By `${path} ${webhook-id}`, on the main thread's performance.now(). */
const arrivedAt = new Map<string, number>();
const byPath = new Map<string, number>();

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const now = performance.timeOrigin + performance.now() - mainTimeOrigin;
    Atomics.add(counts, 0, 1);
    const key = `${req.url} ${String(req.headers['webhook-id'])}`;
    if (arrivedAt.has(key)) Atomics.add(counts, 1, 1);
    else arrivedAt.set(key, now);
    byPath.set(req.url!, (byPath.get(req.url!) ?? 0) + 1);
    res.writeHead(204).end();
  });
});
server.listen(0, '127.0.0.1', () =>
  parentPort!.postMessage({ port: (server.address() as AddressInfo).port }),
);
parentPort!.on('message', (message: 'snapshot' | 'stop') => {
  if (message === 'snapshot') parentPort!.postMessage({ arrivedAt, byPath });
  else server.close(() => process.exit(0));
});
