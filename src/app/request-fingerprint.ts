/**
 * What an Idempotency-Key is bound to: the operation and its body, as JSON with object keys
 * sorted, so the same body in another key order is the same request.
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

export function fingerprint(operationId: string, body: unknown): string {
  return createHash('sha256')
    .update(`${operationId}\n${canonical(body)}`)
    .digest('hex');
}
