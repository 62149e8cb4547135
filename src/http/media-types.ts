import type { Context } from 'openapi-backend';
import type { IncomingHttpHeaders } from 'node:http';
import { ProblemError } from './problems';

/** The request media types the service parses as JSON; which one an operation takes is in the document. */
export const jsonMediaTypes = ['application/json', 'application/merge-patch+json'];

function mediaTypeOf(headers: IncomingHttpHeaders): string | undefined {
  return headers['content-type']?.split(';')[0].trim().toLowerCase() || undefined;
}

/** 415 unless the request's Content-Type is one the operation's requestBody lists. */
export function requireDocumentedMediaType(context: Context): void {
  const accepted = Object.keys(context.operation.requestBody && 'content' in context.operation.requestBody ? context.operation.requestBody.content : {});
  if (accepted.length === 0) return;
  const sent = mediaTypeOf(context.request.headers as IncomingHttpHeaders);
  if (sent === undefined || !accepted.includes(sent)) {
    throw new ProblemError(
      'unsupported-media-type',
      `This operation takes ${accepted.join(' or ')}, not ${sent ?? 'a body without a Content-Type'}.`,
    );
  }
}
