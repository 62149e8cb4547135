/**
 * A client that does not take an answer it asked for pins that answer in the service's memory
 * for as long as its connection lives. Once an answer is written, the client has this long to
 * take what of it the socket still holds (a page is at most about 1 MiB); then its connection is
 * closed.
 */
import type { Socket } from 'node:net';
import type { NextFunction, Request, Response } from 'express';

export function cutOffSlowReaders(timeoutMs: number) {
  return (res: Response) => {
    // 'prefinish': the whole answer is written. What the kernel took holds nothing of the
    // service's; only an answer the socket still buffers needs the clock.
    res.once('prefinish', () => {
      if (res.writableFinished || res.socket?.writableLength === 0) return;
      const timer = setTimeout(() => res.destroy(), timeoutMs);
      const clear = () => clearTimeout(timer);
      res.once('finish', clear);
      res.once('close', clear);
    });
  };
}

/**
 * Requests pipelined on one connection are answered one after another: each is handled once the
 * answer before it has been taken (or its connection closed). Node parses every request a client
 * sends at once, so a client that pipelines many and reads none would otherwise have the service
 * build and hold an answer for each. A request on a connection whose last answer is done (keep-
 * alive, not pipelined) goes on at once.
 */
export function oneAnswerAtATime() {
  const lastAnswer = new WeakMap<Socket, Response>();
  return (req: Request, res: Response, next: NextFunction) => {
    const before = lastAnswer.get(req.socket);
    lastAnswer.set(req.socket, res);
    if (before === undefined || before.closed) next();
    else before.once('close', () => next());
  };
}
