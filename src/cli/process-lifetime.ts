/**
 * How a long-running command (`npm start`, `sandbox`, `mock`, `events listen`) ends, and ends what
 * it started. Its npm script `exec`s node, so the SIGINT or SIGTERM that npm (or make, through
 * npm) passes on reaches it rather than a shell that would die and leave it running.
 */
import type { ChildProcess } from 'node:child_process';

/**
 * Calls `stop` on the first SIGINT or SIGTERM; later ones change nothing. A Ctrl-C signals every
 * process of the terminal's group and npm passes the same SIGINT on once more: with Node's default
 * for a second one, that would end the process before it had stopped. Returns the same once-only stop.
 */
export function onStopSignal(stop: () => void): () => void {
  let stopping = false;
  const once = () => {
    if (stopping) return;
    stopping = true;
    stop();
  };
  process.on('SIGINT', once);
  process.on('SIGTERM', once);
  return once;
}

/**
 * Calls `stop` once the process that started this one has gone (npm killed with SIGKILL, say),
 * which no signal reports: nobody would stop this one, or the children it started, any more. The
 * parent's id is checked twice a second, by a timer that keeps no process alive.
 */
export function stopWithParent(stop: () => void): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    stop();
  }, 500);
  timer.unref();
}

/** Ends `child` when this process exits, however it does (a crash included), short of SIGKILL. */
export function endWithThisProcess(child: ChildProcess): ChildProcess {
  process.once('exit', () => child.kill('SIGTERM'));
  return child;
}
