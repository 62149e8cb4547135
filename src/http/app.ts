import http from 'node:http';
import cors from 'cors';
import express, { type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { isReachable } from '../db/health';
import { DatabaseUnavailableError } from '../errors';
import type { ContractDocument } from './document';
import { docsRouter } from './docs-page';
import { sendReply } from './http-reply';
import { jsonMediaTypes } from './media-types';
import { observeRequests, type Metrics, type RequestFacts } from './observability';
import type { OperationRouter } from './operation-router';
import type { RateLimiter } from './rate-limit';
import type { ShutdownSignal } from './shutdown';
import { ProblemError, problemFor } from './problems';

/** Request bodies are at most 64 KiB (the document's 413). */
const bodyLimitBytes = 64 * 1024;

/** A path whose percent-encoding does not decode names nothing; say so before routing on it. */
function refuseMalformedPath(path: string): void {
  try {
    decodeURIComponent(path);
  } catch {
    throw new ProblemError('invalid-request', 'The request path is not validly percent-encoded.');
  }
}

/** Response headers a browser client may read, when CORS lets one in. */
const exposedHeaders = ['Location', 'ETag', 'X-Request-Id', 'WWW-Authenticate', 'Allow', 'Retry-After'];

interface AppOptions {
  document: ContractDocument;
  route: OperationRouter;
  knex: Knex;
  logger: Logger;
  metrics: Metrics;
  corsOrigins: string[];
  shutdown: ShutdownSignal;
  rateLimiter?: RateLimiter;
}

export function createApp({ document, route, knex, logger, metrics, corsOrigins, shutdown, rateLimiter }: AppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  // Express's ETag is a weak hash of every body; the API's ETags are the resources' versions.
  app.set('etag', false);

  app.use(observeRequests(logger, metrics));
  app.use(shutdown.closeConnectionsWhenStopping);
  app.use(helmet());
  if (corsOrigins.length > 0) app.use(cors({ origin: corsOrigins, exposedHeaders, maxAge: 600 }));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    if (await isReachable(knex)) res.json({ status: 'ready' });
    else sendReply(res, problemFor(new DatabaseUnavailableError('readiness check failed')));
  });
  app.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(document.json);
  });
  app.get('/openapi.yaml', (_req, res) => {
    res.type('application/yaml').send(document.yaml);
  });

  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  app.use(docsRouter());
  if (rateLimiter) app.use('/v1', rateLimiter.middleware);

  // Only the methods the document gives bodies to read one; on others a body is ignored.
  const parseJson = express.json({ type: jsonMediaTypes, limit: bodyLimitBytes, strict: true });
  app.use((req, res, next) => (req.method === 'POST' || req.method === 'PATCH' ? parseJson(req, res, next) : next()));
  const fail = (res: Response, error: unknown) => {
    const reply = problemFor(error);
    if (reply.status === 500) logger.error({ request_id: res.locals.requestId, err: error }, 'unexpected fault');
    sendReply(res, reply);
  };
  app.use(async (req: Request, res: Response) => {
    try {
      refuseMalformedPath(req.path);
      const request = { method: req.method, path: req.path, query: req.query as Record<string, string>, headers: req.headers as Record<string, string>, body: req.body };
      sendReply(res, await route(request, res.locals.facts as RequestFacts));
    } catch (error) {
      fail(res, error);
    }
  });
  // Errors before routing: the body parser's (malformed JSON, too large, bad charset).
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => fail(res, error));
  return app;
}

/** How long a client may take, and how many may be connected at once. */
export interface ConnectionLimits {
  headersTimeoutSeconds: number;
  requestTimeoutSeconds: number;
  keepAliveTimeoutSeconds: number;
  /** 0: no cap. */
  maxConnections: number;
}

/**
 * The HTTP server for an Express app, its requests and responses born with the app's
 * prototypes. Express otherwise swaps in those prototypes (`Object.setPrototypeOf`) as each
 * request arrives, which costs far more than its routing: V8 then meets objects of an unfamiliar
 * shape throughout node's http code and leaves its fast paths. With the prototype already in
 * place, the swap does nothing.
 */
export function httpServerFor(app: express.Express, limits: ConnectionLimits): http.Server {
  const headersTimeout = limits.headersTimeoutSeconds * 1000;
  const server = http.createServer(
    {
      IncomingMessage: bornWith(http.IncomingMessage, app.request),
      ServerResponse: bornWith(http.ServerResponse, app.response),
      headersTimeout,
      requestTimeout: limits.requestTimeoutSeconds * 1000,
      // Node looks for late requests this often (30 s by default), so a timeout is enforced up to
      // this much late: a second at most.
      connectionsCheckingInterval: Math.min(1000, headersTimeout / 2),
    },
    app,
  );
  server.keepAliveTimeout = limits.keepAliveTimeoutSeconds * 1000;
  // Connections past the cap are closed as they are accepted ('drop'), before costing anything more.
  if (limits.maxConnections > 0) server.maxConnections = limits.maxConnections;
  return server;
}

function bornWith<T extends typeof http.IncomingMessage | typeof http.ServerResponse>(base: T, prototype: object): T {
  // A function, not a class: a class's prototype cannot be replaced.
  function Constructor(this: object, ...args: unknown[]) {
    Reflect.apply(base, this, args);
  }
  Constructor.prototype = prototype;
  return Constructor as unknown as T;
}
