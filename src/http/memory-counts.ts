import { MemoryStore, type ClientRateLimitInfo } from 'express-rate-limit';

/**
 * express-rate-limit's MemoryStore answers an increment with its live record of the key, which
 * every hit counted before the caller reads it changes: requests that arrive together would all
 * read the last one's count. This answers with the count this hit made, read as it is made (the
 * store's increment counts before it first yields).
 */
export class MemoryCounts extends MemoryStore {
  override increment(key: string): Promise<ClientRateLimitInfo> {
    const counting = super.increment(key);
    const live = this.current.get(key);
    return live
      ? Promise.resolve({ totalHits: live.totalHits, resetTime: live.resetTime })
      : counting;
  }
}
