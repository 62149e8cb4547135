/**
 * At most `limit` tasks at once. Those waiting take turns by key (round-robin over keys, first
 * come first served within one), so one key's many waiters delay another key's by a turn each
 * at most. A waiter whose signal aborts before its turn leaves the queue.
 */
export class FairLimiter {
  private running = 0;
  /** Waiters by key, in the order the keys take their turns. */
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(private readonly limit: number) {}

  /** Tasks running now. */
  get active(): number {
    return this.running;
  }

  /** Resolves with the function that ends the task once its turn comes; rejects if `signal` aborts first. */
  acquire(key: string, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.running < this.limit && this.waiting.size === 0)
      return Promise.resolve(this.started());
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(key) ?? [];
      const turn = () => {
        signal?.removeEventListener('abort', abort);
        resolve(this.started());
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
    });
  }

  private started(): () => void {
    this.running++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.running--;
      this.next();
    };
  }

  private next(): void {
    while (this.running < this.limit && this.waiting.size > 0) {
      const [key, queue] = this.waiting.entries().next().value!;
      const turn = queue.shift()!;
      // The key goes to the back of the line, behind every other key waiting.
      this.waiting.delete(key);
      if (queue.length > 0) this.waiting.set(key, queue);
      turn();
    }
  }
}
