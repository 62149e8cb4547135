/**
 * A client that does not take an answer it asked for pins that answer in the service's memory
 * for as long as its connection lives. Once an answer is written, the client has this long to
 * take all of it (a page is at most about 1 MiB); then its connection is closed.
 */
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
