/**
 * Background work done in cycles, one at a time: a cycle runs on a poll, or soon after being asked
 * for (waiting `gatherMs` first, so that the requests close behind one make one cycle); asked for
 * while one runs, another follows it. Used by the event numbering and the webhook deliveries.
 */
export interface RepeatingCycle {
  /** Runs a cycle soon: after the one running, gathering what else comes meanwhile. */
  soon(): void;
  /** Runs no more cycles; resolves when the one running has ended. */
  stop(): Promise<void>;
}

export interface CycleTiming {
  gatherMs: number;
  /** How long to wait for the next poll after a cycle that nothing asked to follow. */
  pollMs(): number;
  /** Hears that the next cycle is a poll's, just before it runs. */
  onPoll?(): void;
}

/** Starts running `cycle` at once, then as `timing` says. `cycle` handles its own failures. */
export function repeatCycle(cycle: () => Promise<void>, timing: CycleTiming): RepeatingCycle {
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  /** Asked for while a cycle ran: run again (after gathering) when it ends. */
  let again = false;
  let gathering = false;

  const run = () => {
    if (stopping) return;
    if (running) {
      again = true;
      return;
    }
    clearTimeout(timer);
    gathering = false;
    running = cycle().finally(() => {
      running = undefined;
      if (stopping) return;
      timer = again
        ? setTimeout(run, timing.gatherMs)
        : setTimeout(() => (timing.onPoll?.(), run()), timing.pollMs());
      again = false;
    });
  };
  run();

  return {
    soon() {
      if (stopping) return;
      if (running) again = true;
      else if (!gathering) {
        gathering = true;
        clearTimeout(timer);
        timer = setTimeout(run, timing.gatherMs);
      }
    },
    async stop() {
      stopping = true;
      clearTimeout(timer);
      await running;
    },
  };
}
