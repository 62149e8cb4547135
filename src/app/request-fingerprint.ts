/**
 * What an Idempotency-Key is bound to: the operation, its path parameters (the endpoint whose
 * secret a key rotates), its body, as JSON with object keys sorted, so the same body in another
 * key order is the same request, and the API version it was made in. An operation without path
 * parameters, in the version before versions, is printed as it was before those counted, so keys
 * bound earlier still replay.
 */
import { createHash } from 'node:crypto';
import { versionBeforeVersions } from '../versions/versions';

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : 1,
    );
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function fingerprint(
  operationId: string,
  body: unknown,
  pathParameters: Record<string, string> = {},
  apiVersion: string = versionBeforeVersions,
): string {
  const version = apiVersion === versionBeforeVersions ? '' : `${apiVersion}\n`;
  const path = Object.keys(pathParameters).length > 0 ? `${canonical(pathParameters)}\n` : '';
  return createHash('sha256')
    .update(`${version}${operationId}\n${path}${canonical(body)}`)
    .digest('hex');
}
