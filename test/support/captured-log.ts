import { Writable } from 'node:stream';

/** A log destination for the service that keeps each JSON line, for a test to read. */
export function capturedLog() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return {
    stream,
    lines,
    /** The lines with this message so far. */
    withMessage: (msg: string) => lines.filter((line) => line.msg === msg),
    /** Resolves once `count` lines with this message have been written. */
    async waitFor(msg: string, count = 1, timeoutMs = 10_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (lines.filter((line) => line.msg === msg).length < count) {
        if (Date.now() > deadline)
          throw new Error(`no ${count}× "${msg}" in the log within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}
