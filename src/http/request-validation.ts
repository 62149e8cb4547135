/**
 * How a request is validated against a version's document, by the service and by `make mock`
 * alike, so that both refuse the same requests in the same words: ajv's options, the backend
 * that validates, and the problem a failure is.
 */
import Ajv, { type ErrorObject, type Options as AjvOptions } from 'ajv';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, ValidationContext, type Document, type Operation } from 'openapi-backend';
import { ProblemError } from '../errors';
import type { components } from '../../generated/api';
import { taskFilterIssues } from '../db/task-filter';
import { describeIssues, maxIssues, validationIssues, type FieldHints } from './validation-issues';

type ValidationIssue = components['schemas']['ValidationIssue'];

function customizeAjv(ajv: Ajv, options: AjvOptions, context: ValidationContext): Ajv {
  // Query parameters arrive as strings; `?status=done` once must still be an array of one.
  const ajvFor =
    context === ValidationContext.Params ? new Ajv({ ...options, coerceTypes: 'array' }) : ajv;
  return addFormats(ajvFor);
}

export const validationOptions = {
  ajvOpts: { allErrors: true, useDefaults: true, verbose: true },
  customizeAjv,
};

/**
 * A backend that validates requests by `definition`, initialised. Quick: no check of the
 * document against the OpenAPI schema (the linters do that before it ships), and validators
 * compiled when first needed.
 */
export async function validatingBackend(definition: Document): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend({
    definition,
    strict: true,
    quick: true,
    coerceTypes: true,
    validate: true,
    ...validationOptions,
  });
  await api.init();
  return api;
}

function documentedHeaderName(operation: Operation, name: string): string {
  const parameters = (operation.parameters ?? []) as Array<{ in?: string; name?: string }>;
  const declared = parameters.find(
    (parameter) => parameter.in === 'header' && parameter.name?.toLowerCase() === name,
  );
  return declared?.name ?? name;
}

/** The 400 a request that fails validation gets; `more` is said after what is wrong. */
export function invalidRequest(
  errors: ErrorObject[],
  operation: Operation,
  more = '',
): ProblemError {
  const hints = (operation as { 'x-field-hints'?: FieldHints })['x-field-hints'];
  const filters = filterIssues(errors);
  const { issues, notListed } = validationIssues(filters.otherErrors, hints);
  const room = Math.max(0, maxIssues - issues.length);
  issues.push(...filters.issues.slice(0, room));
  const unlisted = notListed + filters.notListed + Math.max(0, filters.issues.length - room);
  // The validator reads headers lower-cased: name them as the document does (`If-Match`).
  for (const issue of issues)
    if (issue.in === 'header') issue.name = documentedHeaderName(operation, issue.name!);
  return new ProblemError('invalid-request', describeIssues(issues, unlisted) + more, {
    errors: issues,
    errorsNotListed: unlisted,
  });
}

/**
 * A TaskFilter that breaks its schema fails every one of its `oneOf` parts, and ajv reports each:
 * its own check (src/db/task-filter) says instead where the fault is. The schema marks itself
 * with `x-task-filter`; the outermost failing filter is checked whole, and ajv's errors within it
 * are dropped. Should the check find nothing (it never should), ajv's errors stand.
 */
function filterIssues(errors: ErrorObject[]) {
  const filters = errors.filter(
    (error) =>
      error.keyword === 'oneOf' &&
      (error.parentSchema as { 'x-task-filter'?: boolean } | undefined)?.['x-task-filter'] ===
        true &&
      error.instancePath.startsWith('/requestBody'),
  );
  const within = (path: string, outer: string) => path === outer || path.startsWith(outer + '/');
  const inner = (path: string, outer: string) => path.startsWith(outer + '/');
  const issues: ValidationIssue[] = [];
  let notListed = 0;
  const replaced: string[] = [];
  for (const filter of filters) {
    const path = filter.instancePath;
    if (replaced.includes(path) || filters.some((other) => inner(path, other.instancePath)))
      continue;
    const found = taskFilterIssues(filter.data, path.slice('/requestBody'.length));
    if (found.issues.length === 0) continue;
    replaced.push(path);
    issues.push(...found.issues);
    notListed += found.notListed;
  }
  const otherErrors = errors.filter(
    (error) => !replaced.some((path) => within(error.instancePath, path)),
  );
  return { issues, notListed, otherErrors };
}

/** Said after a refusal in an older version when the newest version takes the same request. */
export const validInVersion = (version: string) =>
  ` It is valid in API version ${version}: send Api-Version: ${version} to use it.`;
