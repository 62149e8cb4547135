/**
 * The webhooks bench's receiver, in a thread of its own so that it answers at once whatever the
 * writers in the bench's main thread are doing: 204 to every request, noting when each event
 * reached each endpoint (on the main thread's clock) and how many arrived more than once.
 */
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

const { counts, mainTimeOrigin } = workerData as { counts: Int32Array; mainTimeOrigin: number };
/** By `${path} ${webhook-id}`, on the main thread's performance.now(). */
const arrivedAt = new Map<string, number>();
const byPath = new Map<string, number>();

// A receiver that answers at once stands for one on a machine of its own: on the bench's two
// cores it would otherwise wait its turn behind the writers, the service's requests and MariaDB,
// and the delay measured would be the bench's. On Linux pid 0 names this thread alone.
try {
  os.setPriority(0, -20);
} catch {
  // Without CAP_SYS_NICE it keeps the bench's priority; the webhooks report says which.
}

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
  parentPort!.postMessage({
    port: (server.address() as AddressInfo).port,
    nice: os.getPriority(0),
  }),
);
parentPort!.on('message', (message: 'snapshot' | 'paths' | 'stop') => {
  if (message === 'snapshot') parentPort!.postMessage({ arrivedAt, byPath });
  else if (message === 'paths') parentPort!.postMessage({ byPath });
  else server.close(() => process.exit(0));
});
