/**
 * A client that does not take an answer it asked for pins that answer in the service's memory
 * for as long as its connection lives. Once an answer is written, the client has this long to
 * take all of it (a page is at most about 1 MiB); then its connection is closed.
 */
import type { Socket } from 'node:net';
import type { NextFunction, Request, Response } from 'express';

export function cutOffSlowReaders(timeoutMs: number) {
  return (_req: Request, res: Response, next: NextFunction) => {
    // 'prefinish': the whole answer is written, but may still wait in memory for the client.
    res.once('prefinish', () => {
      if (res.writableFinished) return;
      const timer = setTimeout(() => res.destroy(), timeoutMs);
      const clear = () => clearTimeout(timer);
      res.once('finish', clear);
      res.once('close', clear);
    });
    next();
  };
}

/**
 * Requests pipelined on one connection are answered one after another: each is handled once the
 * answer before it has been taken (or its connection closed). Node parses every request a client
 * sends at once, so a client that pipelines many and reads none would otherwise have the service
 * build and hold an answer for each.
 */
export function oneAnswerAtATime() {
  const lastAnswer = new WeakMap<Socket, Promise<void>>();
  return (req: Request, res: Response, next: NextFunction) => {
    const before = lastAnswer.get(req.socket);
    lastAnswer.set(req.socket, new Promise<void>((resolve) => res.once('close', () => resolve())));
    if (before === undefined) next();
    else void before.then(() => next());
  };
}
