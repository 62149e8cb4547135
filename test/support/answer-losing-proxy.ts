/**
 * An HTTP proxy in front of the service that can lose answers: a request it is told to lose
 * reaches the service, which handles it and answers, and then the proxy cuts the client's
 * connection instead of passing the answer on, as a network failure after the request arrived
 * does. It can also answer a request itself, without forwarding it (a refusal from a gateway).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ForwardedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
}

/** 'lose': forward, then cut the connection; a status: answer that without forwarding. */
export type Interference =
  'lose' | { status: number; headers?: Record<string, string>; body?: string } | undefined;

export interface AnswerLosingProxy {
  /** http://127.0.0.1:PORT */
  url: string;
  /** Every request that arrived, in order. */
  seen: ForwardedRequest[];
  /** Decides for each request (its index among all seen): pass it on, lose its answer, or answer it. */
  interfere(rule: (request: ForwardedRequest, index: number) => Interference): void;
  stop(): Promise<void>;
}

export async function startAnswerLosingProxy(upstream: string): Promise<AnswerLosingProxy> {
  const target = new URL(upstream);
  const seen: ForwardedRequest[] = [];
  let rule: (request: ForwardedRequest, index: number) => Interference = () => undefined;
  const server = http.createServer((req, res) => {
    const request: ForwardedRequest = { method: req.method!, path: req.url!, headers: req.headers };
    const interference = rule(request, seen.push(request) - 1);
    if (interference !== undefined && interference !== 'lose') {
      req.resume();
      res
        .writeHead(interference.status, {
          'content-type': 'application/problem+json',
          ...interference.headers,
        })
        .end(interference.body ?? '');
      return;
    }
    const forwarded = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        if (interference === 'lose') {
          // The service has answered: read it whole, so the change is surely made, then cut the client off.
          answer.resume();
          answer.once('end', () => req.socket.destroy());
          return;
        }
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => req.socket.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    interfere(next) {
      rule = next;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
