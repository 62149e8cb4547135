import http from 'node:http';
import cors from 'cors';
import express, { type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { isReachable } from '../db/health';
import { DatabaseUnavailableError, ProblemError } from '../errors';
import type { ContractDocument } from './document';
import { docsRouter } from './docs-page';
import { problemPages } from './problem-pages';
import { deprecationHeaders, type DeprecatedVersions } from './deprecations';
import { publishedVersions, versionDocuments, versionsBody } from './published-versions';
import type { Exchange } from './exchange';
import { sendReply, type HttpReply } from './http-reply';
import { cutOffSlowReaders, oneAnswerAtATime } from './slow-readers';
import { parseJsonBody } from './json-body';
import { jsonMediaTypes } from './media-types';
import { observeRequests, type Metrics, type RequestContext } from './observability';
import type { OperationRouter } from './operation-router';
import type { KeyRateLimit } from './rate-limit';
import type { ShutdownSignal } from './shutdown';
import { problemFor } from './problems';
import {
  capConnectionsPerAddress,
  requestsInProgressPerClient,
  shedIdleConnections,
  type TrustsProxy,
} from './address-caps';
import { requestClasses } from './shims/express-prototypes';

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

/** Response headers a browser client may read, when CORS lets one in: every header the document gives a response. */
const exposedHeaders = [
  'Location',
  'ETag',
  'X-Request-Id',
  'WWW-Authenticate',
  'Allow',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'Idempotent-Replayed',
  'Api-Version',
  'Deprecation',
  'Sunset',
  'Link',
];

/** Runs an Express middleware outside the chain: resolves when it calls next(), rejects with what it passes. */
function runMiddleware(
  middleware: express.RequestHandler,
  req: Request,
  res: Response,
): Promise<void> {
  return new Promise((resolve, reject) => {
    void middleware(req, res, (error?: unknown) => (error ? reject(error) : resolve()));
  });
}

/**
 * Whether a request body is still on its way, unread: answering without reading it, the
 * service closes the connection rather than reading on to reach the next request.
 */
function bodyPending(req: Request): boolean {
  const declared =
    req.headers['transfer-encoding'] !== undefined ||
    (req.headers['content-length'] ?? '0') !== '0';
  return declared && !req.complete;
}

interface AppOptions {
  document: ContractDocument;
  api: OperationRouter;
  knex: Knex;
  logger: Logger;
  metrics: Metrics;
  corsOrigins: string[];
  /** The API versions marked deprecated, with their sunset dates (API_VERSIONS_DEPRECATED). */
  deprecatedVersions?: DeprecatedVersions;
  trustProxy: Config['trustProxy'];
  slowReaderTimeoutSeconds: number;
  /** Behind a trusted proxy: requests in progress per forwarded client address (0: no cap). */
  maxConnectionsPerAddress: number;
  shutdown: ShutdownSignal;
  /** The per-key rate limit; none when it is off. */
  keyRateLimit?: KeyRateLimit;
}

export function createApp({
  document,
  api,
  knex,
  logger,
  metrics,
  corsOrigins,
  deprecatedVersions = new Map(),
  trustProxy,
  slowReaderTimeoutSeconds,
  maxConnectionsPerAddress,
  shutdown,
  keyRateLimit,
}: AppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  // Express's ETag is a weak hash of every body; the API's ETags are the resources' versions.
  app.set('etag', false);
  // req.ip: the socket's address unless the configured proxies vouch for X-Forwarded-For.
  app.set('trust proxy', trustProxy);

  const observe = observeRequests(logger, metrics);
  const cutOff = cutOffSlowReaders(slowReaderTimeoutSeconds * 1000);
  const oneAtATime = oneAnswerAtATime();
  // What every request goes through, in one layer: Express's dispatch from layer to layer costs more than each of these.
  app.use((req: Request, res: Response, next: NextFunction) => {
    observe(req, res);
    cutOff(res);
    shutdown.closeConnectionWhenStopping(res);
    oneAtATime(req, res, next);
  });
  app.use(helmet());
  if (corsOrigins.length > 0) app.use(cors({ origin: corsOrigins, exposedHeaders, maxAge: 600 }));

  const deprecation = deprecationHeaders(deprecatedVersions);
  const send = (res: Response, reply: HttpReply) => {
    const { operationId, apiVersion } = res.locals.requestContext as RequestContext;
    // Every answer served in a version says which, problems, 204 and 304 included.
    let answer = reply;
    if (apiVersion !== undefined) {
      answer = api.answerIn(apiVersion, operationId, reply);
      res.setHeader('Api-Version', apiVersion);
      const deprecated = deprecation.get(apiVersion);
      if (deprecated)
        for (const name of Object.keys(deprecated)) res.setHeader(name, deprecated[name]);
      // Added to what CORS may have put there (Origin), not in its place; no answer sets its own.
      const vary = res.getHeader('Vary');
      res.setHeader('Vary', vary === undefined ? 'Api-Version' : `${vary}, Api-Version`);
    }
    sendReply(res, answer, api.writeBody(answer, operationId, res.locals.requestId, apiVersion));
  };
  const problemReply = (res: Response, error: unknown): HttpReply => {
    const reply = problemFor(error);
    if (reply.status === 500)
      logger.error({ request_id: res.locals.requestId, err: error }, 'unexpected fault');
    // What the database said (a lost connection, a timeout, a Galera node outside the primary
    // component), so an outage's 503s can be told apart.
    else if (error instanceof DatabaseUnavailableError)
      logger.warn({ request_id: res.locals.requestId, err: error.cause }, 'database unavailable');
    return reply;
  };
  serviceRoutes(app, { document, knex, metrics, deprecatedVersions, send });
  app.use(
    apiRoute({
      api,
      keyRateLimit,
      problemReply,
      send,
      takeClientPlace: requestsInProgressPerClient(maxConnectionsPerAddress),
      trustsProxy: app.get('trust proxy fn') as TrustsProxy,
    }),
  );
  // Errors the routes before the API's pass on (a docs file that cannot be read).
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) =>
    send(res, problemReply(res, error)),
  );
  return app;
}

type Send = (res: Response, reply: HttpReply) => void;

/**
 * Names a route outside the API for its log line and metrics (`route`, and the metrics'
 * `operation` label), so that /healthz, /metrics or /docs are told apart rather than all "none".
 */
const routedAs =
  (route: string) =>
  (_req: Request, res: Response, next: NextFunction): void => {
    (res.locals.requestContext as RequestContext).route = route;
    next();
  };
/** The same, with the route's own path as its name. */
const routed = (req: Request, res: Response, next: NextFunction): void =>
  routedAs(typeof req.route?.path === 'string' ? req.route.path : req.path)(req, res, next);

/** What is not the API: the service's index, health, readiness, the document, metrics, docs and problem pages. */
function serviceRoutes(
  app: express.Express,
  {
    document,
    knex,
    metrics,
    deprecatedVersions,
    send,
  }: Pick<AppOptions, 'document' | 'knex' | 'metrics' | 'deprecatedVersions'> & { send: Send },
): void {
  // Where a person or a crawler who finds the service's address goes next; the same from /v1.
  const serviceIndex = JSON.stringify({
    name: document.definition.info.title,
    version: document.definition.info.version,
    links: {
      docs: '/docs',
      openapi: '/openapi.yaml',
      openapi_json: '/openapi.json',
      versions: '/versions',
      api: '/v1',
    },
  });
  app.get(['/', '/v1'], routed, (_req, res) => {
    res.type('application/json').send(serviceIndex);
  });
  app.get('/healthz', routed, (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', routed, async (_req, res) => {
    if (await isReachable(knex)) res.json({ status: 'ready' });
    else send(res, problemFor(new DatabaseUnavailableError('readiness check failed')));
  });
  app.get('/openapi.json', routed, (_req, res) => {
    res.type('application/json').send(document.json);
  });
  app.get('/openapi.yaml', routed, (_req, res) => {
    res.type('application/yaml').send(document.yaml);
  });
  const versions = versionsBody(deprecatedVersions);
  app.get('/versions', routed, (_req, res) => {
    res.type('application/json').send(versions);
  });
  const documents = versionDocuments(document);
  app.get('/openapi/:file', routedAs('/openapi/{version}'), (req, res, next) => {
    const found = documents.file(String(req.params.file));
    if (found === undefined) return next();
    res.type(found.format === 'json' ? 'application/json' : 'application/yaml').send(found.text);
  });

  app.get('/metrics', routed, async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.scrape());
  });
  // Mounted at its path: a router that every request entered and left unanswered cost each a turn of the event loop (setImmediate).
  app.use(
    '/docs',
    routedAs('/docs'),
    docsRouter({
      versions: publishedVersions(deprecatedVersions),
      definitionOf: documents.definition,
    }),
  );
  const problemPage = problemPages(document);
  app.get('/problems/:kind', routedAs('/problems/{kind}'), (req, res, next) => {
    const html = problemPage.get(String(req.params.kind));
    if (html === undefined) return next();
    res.type('text/html; charset=utf-8').send(html);
  });
}

/** Every other request: the client's place taken, then the operation router's answer, or the problem it throws. */
function apiRoute({
  api,
  keyRateLimit,
  problemReply,
  send,
  takeClientPlace,
  trustsProxy,
}: Pick<AppOptions, 'api' | 'keyRateLimit'> & {
  problemReply: (res: Response, error: unknown) => HttpReply;
  send: Send;
  takeClientPlace: ReturnType<typeof requestsInProgressPerClient>;
  trustsProxy: TrustsProxy;
}) {
  // The bytes as sent, parsed below: the media type (and its charset) was checked before the body was read.
  const readRawBody = express.raw({ type: jsonMediaTypes, limit: bodyLimitBytes });
  return async (req: Request, res: Response) => {
    let reply: HttpReply;
    try {
      takeClientPlace(req, res, req.ip ?? '', trustsProxy);
      refuseMalformedPath(req.path);
      const request = {
        method: req.method,
        path: req.path,
        query: req.query as Record<string, string>,
        headers: req.headers as Record<string, string>,
        body: undefined as unknown,
      };
      let gone: AbortSignal | undefined;
      const exchange: Exchange = {
        requestContext: res.locals.requestContext as RequestContext,
        clientGone: () => (gone ??= clientGoneSignal(req, res)),
        clientAddress: () => req.ip ?? '',
        countRequest: keyRateLimit
          ? (keyId) => keyRateLimit.countRequest(keyId, req, res)
          : () => Promise.resolve(),
        countMore: keyRateLimit
          ? (keyId, requests, why) => keyRateLimit.countMore(keyId, requests, why, res)
          : () => Promise.resolve(),
        // Only the methods the document gives bodies read one; on others a body is ignored.
        readBody: async (check) => {
          if (req.method !== 'POST' && req.method !== 'PATCH') return undefined;
          await runMiddleware(readRawBody, req, res);
          const raw = req.body as Buffer | undefined;
          req.body = raw === undefined ? undefined : parseJsonBody(raw, check);
          // Where the router parses the request again (validation), it finds the body too.
          request.body = req.body;
          return req.body;
        },
      };
      reply = await api.route(request, exchange);
    } catch (error) {
      reply = problemReply(res, error);
    }
    if (bodyPending(req)) res.setHeader('Connection', 'close');
    // A body its schema refuses (a required field missing) throws here: Express passes that on to the 500 below.
    send(res, reply);
  };
}

/** Aborts when the response's connection closes before the response is sent. */
function clientGoneSignal(req: express.Request, res: express.Response): AbortSignal {
  const gone = new AbortController();
  if (req.socket.destroyed) gone.abort();
  else res.once('close', () => !res.writableFinished && gone.abort());
  return gone.signal;
}

/** How long a client may take, and how many may be connected at once. */
export interface ConnectionLimits {
  headersTimeoutSeconds: number;
  requestTimeoutSeconds: number;
  keepAliveTimeoutSeconds: number;
  /** 0: no cap. */
  maxConnections: number;
  /** Connections from one address, trusted proxies' excepted; 0: no cap. */
  maxConnectionsPerAddress: number;
}

/** The HTTP server for an Express app (see shims/express-prototypes for how its requests and responses are made). */
export function httpServerFor(app: express.Express, limits: ConnectionLimits): http.Server {
  const headersTimeout = limits.headersTimeoutSeconds * 1000;
  const server = http.createServer(
    {
      ...requestClasses(app),
      headersTimeout,
      requestTimeout: limits.requestTimeoutSeconds * 1000,
      // Node looks for late requests this often (30 s by default), so a timeout is enforced up to
      // this much late: a second at most.
      connectionsCheckingInterval: Math.min(1000, headersTimeout / 2),
    },
    app,
  );
  server.keepAliveTimeout = limits.keepAliveTimeoutSeconds * 1000;
  // First: the per-address cap's listener, added after it, runs before it and closes its refusals.
  shedIdleConnections(server, limits.maxConnections);
  capConnectionsPerAddress(
    server,
    limits.maxConnectionsPerAddress,
    app.get('trust proxy fn') as TrustsProxy,
  );
  return server;
}
