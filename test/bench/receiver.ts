/**
 * The webhook benches' receiver (receiver-thread.ts), answering 204 in a thread of its own: its
 * counts read at any time, what arrived (when each event reached each path) read on request.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

export async function startReceiver() {
  const counts = new Int32Array(new SharedArrayBuffer(8));
  const thread = new Worker(path.join(__dirname, 'receiver-thread.js'), {
    workerData: { counts, mainTimeOrigin: performance.timeOrigin },
  });
  const { port, nice } = await new Promise<{ port: number; nice: number }>((resolve) =>
    thread.once('message', resolve),
  );
  return {
    base: `http://127.0.0.1:${port}`,
    /** The receiver thread's nice value: -20 unless the bench may not raise it. */
    nice,
    /** When each event reached each endpoint, and how many reached each path. */
    snapshot: () =>
      new Promise<{ arrivedAt: Map<string, number>; byPath: Map<string, number> }>((resolve) => {
        thread.once('message', resolve);
        thread.postMessage('snapshot');
      }),
    /** How many reached each path: a snapshot without the arrivals, cheap enough to ask for often. */
    byPath: () =>
      new Promise<Map<string, number>>((resolve) => {
        thread.once('message', (message: { byPath: Map<string, number> }) =>
          resolve(message.byPath),
        );
        thread.postMessage('paths');
      }),
    deliveries: () => Atomics.load(counts, 0),
    twice: () => Atomics.load(counts, 1),
    stop: () =>
      new Promise<void>((resolve) => {
        thread.once('exit', () => resolve());
        thread.postMessage('stop');
      }),
  };
}
