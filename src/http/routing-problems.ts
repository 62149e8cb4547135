/**
 * The problems of a request that reaches no operation of its version, in one wording for the
 * service's router, its older versions (an operation a newer version added) and the mock, which
 * answers them as the service does: a path the version does not have is `404`, a method its path
 * lacks is `405` with `Allow`, as every document says.
 */
import type { Request } from 'openapi-backend';
import { ProblemError } from '../errors';
import type { Routes } from './shims/routing';

export function routeNotFound(request: Request): ProblemError {
  return new ProblemError(
    'route-not-found',
    `There is no ${request.method.toUpperCase()} ${request.path}.`,
  );
}

/** `allowed`: every method the document gives the request's path. */
export function methodNotAllowed(request: Request, allowed: string[]): ProblemError {
  return new ProblemError(
    'method-not-allowed',
    `${request.path} has no ${request.method.toUpperCase()}; it has ${allowed.join(', ')}.`,
    { headers: { Allow: allowed.join(', ') } },
  );
}

/** Whichever of the two the request gets where `routes` route it to no operation. */
export function notRouted(routes: Routes, request: Request): ProblemError {
  const allowed = routes.allowedMethods(request);
  return allowed.length > 0 ? methodNotAllowed(request, allowed) : routeNotFound(request);
}
