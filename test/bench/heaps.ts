/**
 * The old generation of a service started with gc-hook.ts, summed over its threads, read before
 * and after each round. A major collection comes every second round or so and costs a tenth of
 * one, and which round it lands in follows the order of the rounds, not what they did: in one run
 * of the filter bench the tenant without a filter went seven rounds without one while the others
 * had one in most. Major collections come in proportion to what the rounds leave in the old
 * generation, so a bench can share their work out by that instead.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { ThreadHeap } from './gc-hook';

export interface Heaps {
  /** What the service's node command needs before its script. */
  nodeArguments: string[];
  env: Record<string, string>;
  /** What the old generations hold now, and what major collections freed of them since the last read. */
  read(): Promise<ThreadHeap>;
  remove(): void;
}

function ask(socketPath: string): Promise<ThreadHeap> {
  return new Promise((resolve, reject) => {
    const request = http.request({ socketPath, path: '/' }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve(JSON.parse(body) as ThreadHeap));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

export function heapsOf(): Heaps {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-heaps-'));
  return {
    nodeArguments: ['--require', path.join(__dirname, 'gc-hook.js')],
    env: { BENCH_GC_HOOK_DIR: folder },
    async read() {
      const sum: ThreadHeap = { oldBytes: 0, freedBytes: 0, majors: 0 };
      for (const name of fs.readdirSync(folder)) {
        // A thread that ended (a webhook thread started again) leaves its socket behind.
        const heap = await ask(path.join(folder, name)).catch(() => {
          fs.rmSync(path.join(folder, name), { force: true });
          return undefined;
        });
        sum.oldBytes += heap?.oldBytes ?? 0;
        sum.freedBytes += heap?.freedBytes ?? 0;
        sum.majors += heap?.majors ?? 0;
      }
      return sum;
    },
    remove: () => fs.rmSync(folder, { recursive: true, force: true }),
  };
}
