/**
 * What `make mock` checks before its Prism answers: a request is validated against its version's
 * document by the service's own validation (src/http/request-validation.ts), so an invalid one
 * gets the service's 400, naming what is wrong in the service's words, where Prism would answer
 * a documented example of another fault. What the mock cannot know (which ids exist, a key's
 * scopes, state) is left to the examples; the sandbox knows it.
 */
import fs from 'node:fs';
import type http from 'node:http';
import type { Document, OpenAPIBackend, Request } from 'openapi-backend';
import YAML from 'yaml';
import { ProblemError } from '../errors';
import { parseJsonBody } from '../http/json-body';
import { invalidRequest, validatingBackend, validInVersion } from '../http/request-validation';
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
  for (const version of supportedVersions) {
    const document = YAML.parse(fs.readFileSync(documentFileOf(version), 'utf8')) as Document;
    backends.set(version, await validatingBackend(document));
  }
  const newest = backends.get(newestVersion)!;
  return (version, req, raw) => {
    const api = backends.get(version)!;
    const bare = asRequest(req, undefined);
    const operation = api.router.matchOperation(bare);
    // No such operation, or no key where one is needed: Prism's 404, 405 or 401, as the service's.
    const open = Array.isArray(operation?.security) && operation.security.length === 0;
    if (operation === undefined || (!open && req.headers.authorization === undefined))
      return undefined;
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
