import type { Response } from 'express';

/** What every route and handler answers: the service writes it to the socket in one place. */
export interface HttpReply {
  status: number;
  body?: unknown;
  contentType?: 'application/json' | 'application/problem+json';
  headers: Record<string, string>;
}

export function sendReply(res: Response, reply: HttpReply): void {
  res.status(reply.status).set(reply.headers);
  if (reply.body === undefined) {
    res.end();
    return;
  }
  // A problem names the request it answers, as X-Request-Id does.
  const body = reply.contentType === 'application/problem+json' ? { ...(reply.body as object), request_id: res.locals.requestId } : reply.body;
  res.type(reply.contentType ?? 'application/json').send(JSON.stringify(body));
}
