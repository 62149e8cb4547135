/**
 * Each interaction's request as it went to the sandbox and what the sandbox answered, recorded in
 * Pact's proxy as they pass. Pact's report of a failure shows only the status and the fields that
 * differ; this shows the problem the service answered (its `detail` and `errors`), which says why.
 * Request bodies and keys are never kept: the pact holds the body, and the key is the tenant's.
 */
import type { Request, Response } from 'express';

/** The request headers shown: those the API reads, besides `Authorization`, which is never shown. */
const shownHeaders = [
  'Api-Version',
  'Content-Type',
  'If-Match',
  'If-None-Match',
  'Idempotency-Key',
];

/** A problem document holds a detail of 4 KiB and 20 errors of 2 KiB at most: anything bigger is not one. */
const maxProblemBytes = 64 * 1024;

interface ValidationIssue {
  in?: string;
  pointer?: string;
  name?: string;
  message?: string;
}

interface Problem {
  detail?: string;
  errors?: ValidationIssue[];
  errors_not_listed?: number;
}

export interface Exchange {
  consumer?: string;
  interaction: string;
  method: string;
  /** The path with its query. */
  path: string;
  headers: [string, string][];
  /** What was sent as `Authorization`, in words. */
  authorization?: string;
  status?: number;
  contentType?: string;
  problem?: Problem;
}

/** What the report shows of a problem document; the rest is not kept. */
function parseProblem(body: Buffer): Problem | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8'));
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
    const { detail, errors, errors_not_listed } = parsed as Problem;
    return { detail, errors, errors_not_listed };
  } catch {
    return undefined;
  }
}

/**
 * Starts the record of a request about to be forwarded: the answer's status, and its body when
 * it is a problem document, are filled in as the proxy writes them back to Pact's verifier.
 */
export function recordExchange(
  interaction: { consumer?: string; description: string },
  req: Request,
  res: Response,
  authorization: string | undefined,
): Exchange {
  const exchange: Exchange = {
    consumer: interaction.consumer,
    interaction: interaction.description,
    method: req.method,
    path: req.originalUrl,
    headers: shownHeaders.flatMap((name): [string, string][] => {
      const value = req.get(name);
      return value === undefined ? [] : [[name, value]];
    }),
    authorization,
  };
  const chunks: Buffer[] = [];
  let size = 0;
  const keep = (chunk: unknown, encoding?: unknown) => {
    if (!/^application\/problem\+json\b/.test(String(res.getHeader('content-type') ?? ''))) return;
    if (typeof chunk !== 'string' && !(chunk instanceof Uint8Array)) return;
    const buffer =
      typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
        : Buffer.from(chunk);
    size += buffer.length;
    if (size <= maxProblemBytes) chunks.push(buffer);
  };
  // The proxy pipes the sandbox's answer into res: its writes are the answer as Pact's verifier gets it.
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    keep(chunk, rest[0]);
    return write(chunk, ...rest);
  }) as Response['write'];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (typeof chunk !== 'function') keep(chunk, rest[0]);
    exchange.status = res.statusCode;
    exchange.contentType = res.getHeader('content-type')?.toString();
    if (chunks.length > 0 && size <= maxProblemBytes)
      exchange.problem = parseProblem(Buffer.concat(chunks));
    return end(chunk, ...rest);
  }) as Response['end'];
  return exchange;
}

function issueLine(issue: ValidationIssue): string {
  const place = issue.pointer !== undefined ? issue.pointer || '(the whole body)' : issue.name;
  return `${[issue.in, place].filter(Boolean).join(' ')}: ${issue.message ?? ''}`;
}

/** The exchange as lines of text, for the report under its interaction and the JUnit failure. */
export function exchangeText(exchange: Exchange): string[] {
  const lines = [`sent ${exchange.method} ${exchange.path}`];
  for (const [name, value] of exchange.headers) lines.push(`  ${name}: ${value}`);
  if (exchange.authorization) lines.push(`  Authorization: ${exchange.authorization}`);
  if (exchange.status === undefined) {
    lines.push('answered nothing (the connection ended first)');
    return lines;
  }
  lines.push(
    `answered ${exchange.status}${exchange.contentType ? ` (${exchange.contentType})` : ''}`,
  );
  const { problem } = exchange;
  if (problem?.detail !== undefined) lines.push(`  detail: ${problem.detail}`);
  if (Array.isArray(problem?.errors)) {
    lines.push('  errors:');
    for (const issue of problem.errors)
      if (issue && typeof issue === 'object') lines.push(`    ${issueLine(issue)}`);
    if (problem.errors_not_listed)
      lines.push(`    and ${problem.errors_not_listed} more not listed`);
  }
  return lines;
}

/** The exchanges of one interaction of Pact's results (by consumer, when Pact names it). */
export function exchangesOf(
  exchanges: Exchange[],
  result: { consumer?: string; description: string },
): Exchange[] {
  return exchanges.filter(
    (exchange) =>
      exchange.interaction === result.description &&
      (result.consumer === undefined ||
        exchange.consumer === undefined ||
        exchange.consumer === result.consumer),
  );
}
