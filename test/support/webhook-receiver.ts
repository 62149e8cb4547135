/**
 * A webhook receiver on 127.0.0.1 for tests: records every request it gets (headers, raw body,
 * when, over which connection) and answers as the test says, or not at all (`hang`).
 */
import http, { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** performance.now() when the body had arrived. */
  at: number;
  /** The client's port: the same for requests over one kept-alive connection. */
  remotePort: number;
}

export type Answer = { status: number; headers?: Record<string, string> } | 'hang';
export type Responder = (request: ReceivedRequest, index: number) => Answer | Promise<Answer>;

export interface WebhookReceiver {
  /** http://127.0.0.1:PORT */
  origin: string;
  received: ReceivedRequest[];
  /** Requests being answered (or hanging, until the client closes the connection) right now, and the most there ever were at once. */
  concurrent(): { now: number; most: number };
  respond(responder: Responder): void;
  /** Resolves once `count` requests (of `path`, when given) have arrived; rejects after `timeoutMs`. */
  waitFor(
    count: number,
    options?: { path?: string | RegExp; timeoutMs?: number },
  ): Promise<ReceivedRequest[]>;
  stop(): Promise<void>;
}

export async function startReceiver(
  responder: Responder = () => ({ status: 204 }),
  /** A port of the test's choosing (one a client was already told of); any free one by default. */
  port = 0,
): Promise<WebhookReceiver> {
  const received: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();
  let current = responder;
  let now = 0;
  let most = 0;
  const waiters = new Set<() => void>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const request: ReceivedRequest = {
        method: req.method!,
        path: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: performance.now(),
        remotePort: req.socket.remotePort!,
      };
      received.push(request);
      now++;
      most = Math.max(most, now);
      for (const wake of [...waiters]) wake();
      const answer = await current(request, received.length - 1);
      if (answer === 'hang') {
        hanging.add(res);
        // Open until the client closes its side: its end is read at once, where the socket's
        // close is emitted a turn of the loop later, after requests on other connections read
        // meanwhile, which would count a request the client has already given up.
        let open = true;
        const closed = () => {
          if (!open) return;
          open = false;
          hanging.delete(res);
          now--;
        };
        res.on('close', closed);
        req.socket.once('end', closed);
        return;
      }
      now--;
      res.writeHead(answer.status, answer.headers).end();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    received,
    concurrent: () => ({ now, most }),
    respond(responder) {
      current = responder;
    },
    waitFor(count, { path, timeoutMs = 10_000 } = {}) {
      const matching = () =>
        received.filter((r) =>
          path === undefined
            ? true
            : typeof path === 'string'
              ? r.path === path
              : path.test(r.path),
        );
      return new Promise((resolve, reject) => {
        const check = () => {
          if (matching().length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(matching());
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `the receiver got ${matching().length} of ${count} requests${path ? ` to ${path}` : ''} in ${timeoutMs} ms`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async stop() {
      for (const res of hanging) res.destroy();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
