/**
 * Loaded into a counted service (`node --require`, heaps.ts) so that a bench can see what each
 * round left in the old generation. Each of the service's threads (the main one and the webhook
 * thread: a `--require` runs in both) answers a request on a socket of its own in
 * BENCH_GC_HOOK_DIR with the bytes its old generation holds, and what the major collections since
 * the last request freed of it.
 */
import http from 'node:http';
import path from 'node:path';
import v8 from 'node:v8';
import { threadId } from 'node:worker_threads';

export interface ThreadHeap {
  oldBytes: number;
  /** Freed from the old generation by major collections since the last request. */
  freedBytes: number;
  majors: number;
}

const young = new Set(['new_space', 'new_large_object_space']);

/** A list of spaces as node:v8 names them, or as the GC profiler does (V8's C++ names). */
type Spaces = Array<{
  space_name?: string;
  space_used_size?: number;
  spaceName?: string;
  spaceUsedSize?: number;
}>;

function oldBytes(spaces: Spaces): number {
  let bytes = 0;
  for (const space of spaces)
    if (!young.has(space.space_name ?? space.spaceName ?? ''))
      bytes += space.space_used_size ?? space.spaceUsedSize ?? 0;
  return bytes;
}

const folder = process.env.BENCH_GC_HOOK_DIR;
if (folder !== undefined) {
  let profiler = new v8.GCProfiler();
  profiler.start();
  const server = http.createServer((_request, response) => {
    const majors = (profiler.stop()?.statistics ?? []).filter(
      (one) => one.gcType === 'MarkSweepCompact',
    );
    profiler = new v8.GCProfiler();
    profiler.start();
    const old = (spaces: unknown) => oldBytes(spaces as Spaces);
    const heap: ThreadHeap = {
      oldBytes: oldBytes(v8.getHeapSpaceStatistics()),
      freedBytes: majors.reduce(
        (sum, one) =>
          sum + old(one.beforeGC.heapSpaceStatistics) - old(one.afterGC.heapSpaceStatistics),
        0,
      ),
      majors: majors.length,
    };
    response.end(JSON.stringify(heap));
  });
  server.listen(path.join(folder, `${process.pid}-${threadId}.sock`));
  server.unref();
}
