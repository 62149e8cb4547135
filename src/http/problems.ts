/**
 * The one place where errors become RFC 9457 problem documents. An error that describes itself
 * (a ProblemError, see src/errors.ts) becomes its problem; the body parser's errors become theirs;
 * anything unrecognised is a 500 that says nothing of the cause.
 */
import type { components } from '../../generated/api';
import { problemTable, ProblemError, type ProblemExtra, type ProblemKind } from '../errors';
import type { HttpReply } from './http-reply';

type Problem = components['schemas']['Problem'];

export const problemKinds = Object.keys(problemTable) as ProblemKind[];
export const problemTitle = (kind: ProblemKind): string => problemTable[kind].title;

/** The document's maxLength for `detail`: a detail can quote what the client sent. */
const maxDetailLength = 4096;

export function clamp(text: string, maxLength: number): string {
  return [...text].length <= maxLength ? text : [...text].slice(0, maxLength - 1).join('') + '…';
}

function problemReply(kind: ProblemKind, detail: string, extra: ProblemExtra = {}): HttpReply {
  const { status, title } = problemTable[kind];
  const problem: Problem = {
    type: `/problems/${kind}`,
    title,
    status,
    detail: clamp(detail, maxDetailLength),
  };
  if (extra.errors) problem.errors = extra.errors;
  if (extra.errorsNotListed) problem.errors_not_listed = extra.errorsNotListed;
  if (extra.limit !== undefined) problem.limit = extra.limit;
  if (extra.matched !== undefined) problem.matched = extra.matched;
  if (extra.latestCursor !== undefined) problem.latest_cursor = extra.latestCursor;
  return {
    status,
    body: problem,
    contentType: 'application/problem+json',
    headers: extra.headers ?? {},
  };
}

/** express.json()'s errors carry a `type`; see body-parser's README. */
function bodyParserProblem(error: { type: string; message: string; limit?: number }): HttpReply {
  switch (error.type) {
    case 'entity.parse.failed':
      return problemReply('malformed-json', 'The request body is not valid JSON.');
    case 'entity.verify.failed':
      return problemReply('malformed-json', error.message);
    case 'entity.too.large':
      return problemReply(
        'payload-too-large',
        `The request body is over the limit of ${error.limit} bytes.`,
      );
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return problemReply('unsupported-media-type', error.message);
    default:
      return problemReply('malformed-json', `The request body could not be read: ${error.message}`);
  }
}

export function problemFor(error: unknown): HttpReply {
  if (error instanceof ProblemError) return problemReply(error.kind, error.detail, error.extra);
  // The body parser's errors (http-errors objects): what the client sent could not be read.
  const bodyError = error as {
    type?: unknown;
    status?: unknown;
    expose?: unknown;
    message: string;
  } | null;
  if (
    bodyError?.expose === true &&
    typeof bodyError.status === 'number' &&
    bodyError.status < 500
  ) {
    return bodyParserProblem({
      type: String(bodyError.type),
      message: bodyError.message,
      limit: (bodyError as { limit?: number }).limit,
    });
  }
  return problemReply('internal-error', 'Something went wrong on our side; nothing was changed.');
}
