/** One load run with autocannon: fixed connections and duration, optionally a fixed rate. */
import autocannon from 'autocannon';

export interface LoadResult {
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export interface Operation {
  name: string;
  /** A request for autocannon; called for each request, so ids can vary. */
  next(): { method: 'GET' | 'POST' | 'PATCH'; path: string; body?: string };
}

export interface LoadOptions {
  connections: number;
  seconds: number;
  /** Stop after this many requests instead of after `seconds`. */
  requests?: number;
  /** How long a request may wait for its answer (10 s). */
  timeoutSeconds?: number;
  /** Requests per second across all connections; as fast as answered when absent. */
  rate?: number;
  /** Sent on every request beside the key (an `Api-Version`, say). */
  headers?: Record<string, string>;
}

export async function drive(
  baseUrl: string,
  key: string,
  operation: Operation,
  options: LoadOptions,
): Promise<LoadResult> {
  const result = await autocannon({
    url: baseUrl,
    connections: options.connections,
    duration: options.seconds,
    amount: options.requests,
    overallRate: options.rate,
    timeout: options.timeoutSeconds ?? 10,
    headers: {
      Authorization: `Bearer ${key}`,
      'Content-Type': 'application/json',
      ...options.headers,
    },
    requests: [{ setupRequest: (request) => ({ ...request, ...operation.next() }) }],
  });
  const failed = result.non2xx + result.errors + result.timeouts;
  if (failed > 0)
    throw new Error(
      `${operation.name} on ${baseUrl}: ${failed} of ${result.requests.total} requests failed ` +
        `(${result.timeouts} timed out, ${result.errors - result.timeouts} errors, statuses ${JSON.stringify(result.statusCodeStats)})`,
    );
  return {
    requests: result.requests.total,
    requestsPerSecond: result.requests.total / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
  };
}
