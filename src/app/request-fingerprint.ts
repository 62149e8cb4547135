/**
 * What an Idempotency-Key is bound to: the operation, its path parameters (the endpoint whose
 * secret a key rotates) and its body, as JSON with object keys sorted, so the same body in
 * another key order is the same request. An operation without path parameters is printed as it
 * was before they counted, so keys bound by an earlier version still replay.
 */
import { createHash } from 'node:crypto';

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
): string {
  const path = Object.keys(pathParameters).length > 0 ? `${canonical(pathParameters)}\n` : '';
  return createHash('sha256')
    .update(`${operationId}\n${path}${canonical(body)}`)
    .digest('hex');
}
