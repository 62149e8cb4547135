import type { NextFunction, Request, Response } from 'express';

/** Once the service is stopping, every answer closes its connection, so keep-alive ends. */
export function shutdownSignal() {
  let stopping = false;
  return {
    begin() {
      stopping = true;
    },
    closeConnectionsWhenStopping(_req: Request, res: Response, next: NextFunction) {
      if (stopping) res.setHeader('Connection', 'close');
      next();
    },
  };
}

export type ShutdownSignal = ReturnType<typeof shutdownSignal>;
