import type { Context } from 'openapi-backend';
import type { IncomingHttpHeaders } from 'node:http';
import { ProblemError } from '../errors';
import { clamp } from './problems';

/** The request media types the service parses as JSON; which one an operation takes is in the document. */
export const jsonMediaTypes = ['application/json', 'application/merge-patch+json'];

function mediaTypeOf(headers: IncomingHttpHeaders): string | undefined {
  return headers['content-type']?.split(';')[0].trim().toLowerCase() || undefined;
}

/** The Content-Type's charset parameter, unquoted and in lower case; undefined when it has none. */
function charsetOf(headers: IncomingHttpHeaders): string | undefined {
  for (const parameter of headers['content-type']?.split(';').slice(1) ?? []) {
    const [name, value = ''] = parameter.split('=', 2);
    if (name.trim().toLowerCase() === 'charset')
      return value
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .toLowerCase();
  }
  return undefined;
}

/**
 * 415 unless the request's Content-Type is one the operation's requestBody lists, in UTF-8: JSON
 * is UTF-8 only (RFC 8259), and a body in another charset would be decoded past every check of
 * its bytes.
 */
export function requireDocumentedMediaType(context: Context): void {
  const accepted = Object.keys(
    context.operation.requestBody && 'content' in context.operation.requestBody
      ? context.operation.requestBody.content
      : {},
  );
  if (accepted.length === 0) return;
  const headers = context.request.headers as IncomingHttpHeaders;
  const sent = mediaTypeOf(headers);
  if (sent === undefined || !accepted.includes(sent)) {
    throw new ProblemError(
      'unsupported-media-type',
      `This operation takes ${accepted.join(' or ')}, not ${sent ?? 'a body without a Content-Type'}.`,
    );
  }
  const charset = charsetOf(headers);
  if (charset !== undefined && charset !== 'utf-8') {
    throw new ProblemError(
      'unsupported-media-type',
      `Request bodies are JSON in UTF-8 only, not charset=${clamp(charset, 100)}.`,
    );
  }
}
