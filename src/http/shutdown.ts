import type { Response } from 'express';

/** Once the service is stopping, every answer closes its connection, so keep-alive ends. */
export function shutdownSignal() {
  let stopping = false;
  return {
    begin() {
      stopping = true;
    },
    closeConnectionWhenStopping(res: Response) {
      if (stopping) res.setHeader('Connection', 'close');
    },
  };
}

export type ShutdownSignal = ReturnType<typeof shutdownSignal>;
