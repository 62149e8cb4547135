/**
 * The router openapi-backend routes and validates with, picked in this one place by
 * LIBRARY_SHIMS: the compiled one, or, with LIBRARY_SHIMS=off, openapi-backend's own.
 */
import type { OpenAPIBackend, OpenAPIRouter, Operation, Request } from 'openapi-backend';
import { libraryShims } from '../../config';
import { CompiledRouter } from './compiled-router';

/** What the service asks of the router besides routing. */
export interface Routes {
  getOperations(): Operation[];
  /** For a 405's Allow header: every method the document gives the request's path. */
  allowedMethods(req: Request): string[];
}

/** Call once `api` is initialized. */
export function installRouter(api: OpenAPIBackend): Routes {
  if (libraryShims) return (api.router = api.validator.router = new CompiledRouter(api.definition));
  const router = api.router;
  const operations = router.getOperations();
  return {
    getOperations: () => operations,
    allowedMethods: (req) => allowedMethods(router, operations, req),
  };
}

/** The methods of the operations the stock router routes the path to, asked method by method. */
function allowedMethods(router: OpenAPIRouter, operations: Operation[], req: Request): string[] {
  const routedTo = operations.filter(
    (operation) =>
      router.matchOperation({ ...req, method: operation.method })?.operationId ===
      operation.operationId,
  );
  return [...new Set(routedTo.map((operation) => operation.method.toUpperCase()))];
}
