/**
 * At most `limit` tasks at once, and at most `perKey` of them for one key. Those waiting take
 * turns by key (round-robin over keys, first come first served within one), so one key's many
 * waiters delay another key's by a turn each at most. A waiter whose signal aborts before its
 * turn leaves the queue.
 */
export class FairLimiter {
  private running = 0;
  /** Tasks running now, by key. */
  private readonly runningFor = new Map<string, number>();
  /** Waiters by key, in the order the keys take their turns. */
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(
    private readonly limit: number,
    private readonly perKey = limit,
  ) {}

  /** Tasks running now. */
  get active(): number {
    return this.running;
  }

  /** Resolves with the function that ends the task once its turn comes; rejects if `signal` aborts first. */
  acquire(key: string, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.running < this.limit && this.waiting.size === 0 && this.mayStart(key))
      return Promise.resolve(this.started(key));
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(key) ?? [];
      const turn = () => {
        signal?.removeEventListener('abort', abort);
        resolve(this.started(key));
      };
      const abort = () => {
        const at = queue.indexOf(turn);
        if (at >= 0) queue.splice(at, 1);
        if (queue.length === 0 && this.waiting.get(key) === queue) this.waiting.delete(key);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', abort, { once: true });
      queue.push(turn);
      this.waiting.set(key, queue);
      this.next();
    });
  }

  private mayStart(key: string): boolean {
    return (this.runningFor.get(key) ?? 0) < this.perKey;
  }

  private started(key: string): () => void {
    this.running++;
    this.runningFor.set(key, (this.runningFor.get(key) ?? 0) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.running--;
      const left = this.runningFor.get(key)! - 1;
      if (left === 0) this.runningFor.delete(key);
      else this.runningFor.set(key, left);
      this.next();
    };
  }

  private next(): void {
    while (this.running < this.limit) {
      const key = [...this.waiting.keys()].find((waiting) => this.mayStart(waiting));
      if (key === undefined) return;
      const queue = this.waiting.get(key)!;
      const turn = queue.shift()!;
      // The key goes to the back of the line, behind every other key waiting.
      this.waiting.delete(key);
      if (queue.length > 0) this.waiting.set(key, queue);
      turn();
    }
  }
}
