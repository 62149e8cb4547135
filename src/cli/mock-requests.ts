/**
 * What `make mock` checks before its Prism answers: a request is validated against its version's
 * document by the service's own validation (src/http/request-validation.ts), so an invalid one
 * gets the service's 400, naming what is wrong in the service's words, where Prism would answer
 * a documented example of another fault; a request its version has no operation for (a path
 * it lacks, a method the path lacks, an operation a newer version added) gets the service's 404
 * or 405 with `Allow`, where Prism would answer its own problem. What the mock cannot know (which
 * ids exist, a key's scopes, state) is left to the examples; the sandbox knows it.
 */
import fs from 'node:fs';
import type http from 'node:http';
import type { Document, OpenAPIBackend, Request } from 'openapi-backend';
import YAML from 'yaml';
import { ProblemError } from '../errors';
import { parseJsonBody } from '../http/json-body';
import { invalidRequest, validatingBackend, validInVersion } from '../http/request-validation';
import { notRouted } from '../http/routing-problems';
import { installRouter, type Routes } from '../http/shims/routing';
import { documentFileOf } from '../versions/documents';
import { newestVersion, supportedVersions } from '../versions/versions';

/** The refusal a request gets before its Prism sees it, or undefined to let Prism answer. */
export type RequestCheck = (
  version: string,
  req: http.IncomingMessage,
  body: Buffer,
) => ProblemError | undefined;

function asRequest(req: http.IncomingMessage, body: unknown): Request {
  const url = new URL(req.url ?? '/', 'http://mock');
  const query: Record<string, string | string[]> = {};
  for (const name of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(name);
    query[name] = values.length === 1 ? values[0] : values;
  }
  return {
    method: req.method ?? 'GET',
    path: url.pathname,
    headers: req.headers as Record<string, string | string[]>,
    query,
    body,
  };
}

export async function requestChecks(): Promise<RequestCheck> {
  const backends = new Map<string, OpenAPIBackend>();
  const routes = new Map<string, Routes>();
  for (const version of supportedVersions) {
    const document = YAML.parse(fs.readFileSync(documentFileOf(version), 'utf8')) as Document;
    const api = await validatingBackend(document);
    backends.set(version, api);
    // The service's router, whose 405 lists the path's methods.
    routes.set(version, installRouter(api));
  }
  const newest = backends.get(newestVersion)!;
  return (version, req, raw) => {
    const api = backends.get(version)!;
    const bare = asRequest(req, undefined);
    const operation = api.router.matchOperation(bare);
    // Routed before the key is looked at, as the service routes a path it does not have; a CORS
    // preflight (OPTIONS) and HEAD are Prism's to answer.
    if (operation === undefined)
      return ['OPTIONS', 'HEAD'].includes(bare.method)
        ? undefined
        : notRouted(routes.get(version)!, bare);
    // No key where one is needed: Prism's 401, the document's example of the service's.
    const open = Array.isArray(operation.security) && operation.security.length === 0;
    if (!open && req.headers.authorization === undefined) return undefined;
    let request: Request;
    try {
      request = asRequest(req, raw.length > 0 ? parseJsonBody(raw) : undefined);
    } catch (error) {
      if (error instanceof ProblemError) return error;
      throw error;
    }
    const { errors } = api.validator.validateRequest(request, operation);
    if (!errors) return undefined;
    const { 'api-version': _named, ...headers } = request.headers;
    const newestTakes =
      version !== newestVersion &&
      !newest.validator.validateRequest({ ...request, headers }, operation.operationId!).errors;
    return invalidRequest(errors, operation, newestTakes ? validInVersion(newestVersion) : '');
  };
}
