import type { ServerResponse } from 'node:http';

/** What every route and handler answers: the service writes it to the socket in one place. */
export interface HttpReply {
  status: number;
  body?: unknown;
  contentType?: 'application/json' | 'application/problem+json';
  headers: Record<string, string>;
}

/**
 * Writes the reply through node's own setHeader and end, with its body's text (see
 * response-bodies.ts). Express's res.send costs far more for the same bytes: it derives the
 * Content-Type again (two mime lookups, a charset parse), the Content-Length, and a freshness
 * check the operations make themselves (If-None-Match), and turns a body over 1,000 bytes into a
 * Buffer written apart from the headers.
 */
export function sendReply(res: ServerResponse, reply: HttpReply, text: string | undefined): void {
  res.statusCode = reply.status;
  for (const name of Object.keys(reply.headers)) res.setHeader(name, reply.headers[name]);
  // Without a body, no Content-Length: node leaves it off a 204 or 304, as HTTP requires.
  if (text === undefined) {
    res.end();
    return;
  }
  res.setHeader('Content-Type', `${reply.contentType ?? 'application/json'}; charset=utf-8`);
  const body = text.length > longBodyChars ? Buffer.from(text) : text;
  res.setHeader('Content-Length', typeof body === 'string' ? Buffer.byteLength(body) : body.length);
  res.end(body);
}

/**
 * A body longer than this is written as a Buffer. A string that the socket does not take at once
 * is kept twice until the client reads it, as the string and as the bytes copied for the kernel,
 * so clients that do not read their large pages would hold the memory twice over. Short bodies
 * stay strings, which node writes with the headers.
 */
const longBodyChars = 64 * 1024;
