/**
 * Idempotency-Key on the operations that declare it: the first request with a key runs and
 * its answer is kept; a retry with the same body gets that answer again and creates nothing.
 */
import { createHash } from 'node:crypto';
import type { idempotencyRepository } from '../db/idempotency-repository';
import type { HttpReply } from './http-reply';
import { ProblemError } from './problems';

type IdempotencyRepository = ReturnType<typeof idempotencyRepository>;

/** JSON with object keys sorted, so the same body in another key order is the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export async function idempotently(
  idempotency: IdempotencyRepository,
  request: { tenantId: string; key: string; operationId: string; body: unknown },
  run: () => Promise<HttpReply>,
): Promise<HttpReply> {
  const { tenantId, key } = request;
  const fingerprint = createHash('sha256').update(`${request.operationId}\n${canonical(request.body)}`).digest('hex');
  const claim = await idempotency.claim(tenantId, key, fingerprint);
  if (claim.outcome === 'replay') {
    const { status, headers, body } = claim.response;
    return { status, body, headers: { ...headers, 'Idempotent-Replayed': 'true' } };
  }
  if (claim.outcome === 'in-progress') {
    throw new ProblemError('idempotency-in-progress', 'A request with this Idempotency-Key is still running; retry shortly.');
  }
  if (claim.outcome === 'reused-with-another-request') {
    throw new ProblemError('idempotency-key-reused', 'This Idempotency-Key was used with another request body; use a new key for a new request.');
  }
  let reply: HttpReply;
  try {
    reply = await run();
  } catch (error) {
    await idempotency.release(tenantId, key).catch(() => {});
    throw error;
  }
  await idempotency.complete(tenantId, key, { status: reply.status, headers: reply.headers, body: reply.body });
  return reply;
}
