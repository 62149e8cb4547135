/**
 * What the service tells its operators: a request id on every response, one JSON log line per
 * request (never a key or a body), and Prometheus metrics at /metrics.
 */
import type { ApiVersion } from '../versions/versions';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import type { Knex } from 'knex';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { v7 as uuidv7 } from 'uuid';
import { requestConflicts } from '../db/transactions';

/** What routing learned about a request, for its log line and metrics. */
export interface RequestContext {
  /** X-Request-Id: the client's own when sane, else a new one. */
  requestId: string;
  operationId?: string;
  /** The document's path template, `/v1/tasks/{task_id}`: ids stay out of logs and labels. */
  route?: string;
  /** A feed request with `wait`: its time is mostly waiting, and goes to a histogram of its own. */
  longPoll?: boolean;
  /** The version the request is answered in, once its key is known (api-version.ts). */
  apiVersion?: ApiVersion;
}

const saneRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

/** A request's id: the client's own X-Request-Id when sane, else a new one. */
export const requestIdFor = (sent: string | string[] | undefined): string =>
  typeof sent === 'string' && saneRequestId.test(sent) ? sent : uuidv7();

/**
 * The request metrics, on the registry the background work puts its own on. A long poll counts in
 * http_requests_total like any request, but its time goes to http_long_poll_duration_seconds:
 * in the request histogram its seconds of waiting would hide every other listEvents' latency.
 */
/**
 * Node's process metrics (heap, event-loop lag, GC, CPU, handles), prom-client's defaults: one
 * registry for the process, made on first use, since they describe the process, not one service
 * in it (tests run many), and each collection starts observers that are never stopped.
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export function createMetrics(knex: Knex, registry: Registry) {
  const ofProcess = processMetrics();
  const labelNames = ['operation', 'status'] as const;
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'Requests answered, by operationId and status.',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer a request, by operationId and status.',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const longPolls = new Histogram({
    name: 'http_long_poll_duration_seconds',
    help: 'Time to answer a long poll of the event feed (listEvents with wait), by status.',
    labelNames: ['status'],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 20, 30, 35],
    registers: [registry],
  });
  const pool = () =>
    (
      knex.client as {
        pool?: { numUsed(): number; numFree(): number; numPendingAcquires(): number };
      }
    ).pool;
  for (const [name, help, read] of [
    ['db_pool_connections_used', 'Database connections in use.', () => pool()?.numUsed() ?? 0],
    [
      'db_pool_connections_free',
      'Database connections idle in the pool.',
      () => pool()?.numFree() ?? 0,
    ],
    [
      'db_pool_acquires_pending',
      'Requests waiting for a database connection.',
      () => pool()?.numPendingAcquires() ?? 0,
    ],
  ] as const) {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  }
  new Counter({
    name: 'db_request_conflicts_total',
    help: "Requests' transactions the database aborted for a conflict (a deadlock, or a Galera certification failure), each run again.",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(requestConflicts(knex));
    },
  });
  // Each pair of labels' series, found once: prom-client otherwise turns the labels into a key
  // (their names sorted, then joined) twice a request.
  const series = new Map<
    string,
    { requests: Counter.Internal; duration: Histogram.Internal<(typeof labelNames)[number]> }
  >();
  return {
    registry,
    /** The text of a scrape: the service's metrics, then the process's. */
    async scrape(): Promise<string> {
      return `${await registry.metrics()}\n${await ofProcess.metrics()}`;
    },
    observe(requestContext: RequestContext, status: number, seconds: number) {
      if (requestContext.longPoll) {
        requests.labels({ operation: operationOf(requestContext), status: String(status) }).inc();
        longPolls.labels({ status: String(status) }).observe(seconds);
        return;
      }
      const operation = operationOf(requestContext);
      const key = `${operation} ${status}`;
      let found = series.get(key);
      if (found === undefined) {
        const labels = { operation, status: String(status) };
        found = { requests: requests.labels(labels), duration: duration.labels(labels) };
        series.set(key, found);
      }
      found.requests.inc();
      found.duration.observe(seconds);
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** The metrics' `operation`: the API's operationId, a route outside the API by its path, else "none" (a path nothing serves). */
const operationOf = (requestContext: RequestContext) =>
  requestContext.operationId ?? requestContext.route ?? 'none';

/** The status logged and counted for a request whose client left before its answer (nginx's). */
export const clientClosedRequest = 499;

/** Sets X-Request-Id, and on finish (or when its client leaves first) writes the request's log line and metrics. */
export function observeRequests(logger: Logger, metrics: Metrics) {
  return (req: Request, res: Response) => {
    const started = process.hrtime.bigint();
    const requestId = requestIdFor(req.headers['x-request-id']);
    const requestContext: RequestContext = { requestId };
    res.locals.requestId = requestId;
    res.locals.requestContext = requestContext;
    res.setHeader('X-Request-Id', requestId);
    logger.debug({ request_id: requestId, method: req.method }, 'request received');
    const ended = (status: number) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.observe(requestContext, status, seconds);
      logger.info({
        request_id: requestId,
        method: req.method,
        route: requestContext.route ?? null,
        operation: requestContext.operationId ?? null,
        api_version: requestContext.apiVersion ?? null,
        status,
        duration_ms: Math.round(seconds * 1e6) / 1e3,
      });
    };
    res.on('finish', () => ended(res.statusCode));
    // A client that leaves before its answer: logged and counted as nginx's 499, client closed request.
    res.on('close', () => !res.writableFinished && ended(clientClosedRequest));
  };
}
