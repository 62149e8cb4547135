import express, { type NextFunction, type Request, type Response } from 'express';
import type { Knex } from 'knex';
import { isReachable } from '../db/health';
import { DatabaseUnavailableError } from '../errors';
import type { ContractDocument } from './document';
import { docsRouter } from './docs-page';
import { sendReply } from './http-reply';
import { jsonMediaTypes } from './media-types';
import type { OperationRouter } from './operation-router';
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

export function createApp(options: { document: ContractDocument; route: OperationRouter; knex: Knex }): express.Express {
  const { document, route, knex } = options;
  const app = express();
  app.disable('x-powered-by');
  // Express's ETag is a weak hash of every body; the contract has no use for it.
  app.set('etag', false);

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

  app.use(docsRouter());

  // Only the methods the document gives bodies to read one; on others a body is ignored.
  const parseJson = express.json({ type: jsonMediaTypes, limit: bodyLimitBytes, strict: true });
  app.use((req, res, next) => (req.method === 'POST' || req.method === 'PATCH' ? parseJson(req, res, next) : next()));
  app.use(async (req: Request, res: Response) => {
    let reply;
    try {
      refuseMalformedPath(req.path);
      reply = await route({ method: req.method, path: req.path, query: req.query as Record<string, string>, headers: req.headers as Record<string, string>, body: req.body });
    } catch (error) {
      reply = problemFor(error);
    }
    sendReply(res, reply);
  });
  // Errors before routing: the body parser's (malformed JSON, too large, bad charset).
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    sendReply(res, problemFor(error));
  });
  return app;
}
