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
  res.type(reply.contentType ?? 'application/json').send(JSON.stringify(reply.body));
}
