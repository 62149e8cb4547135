/**
 * Requests Node's HTTP parser refuses (a control character in a header value, headers too large,
 * malformed framing, a request that does not arrive in time) never reach Express. Node would
 * answer them with a bare status line; the service answers with a problem document and a request
 * id, as it does everything else, and closes the connection.
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { v7 as uuidv7 } from 'uuid';
import type { Metrics } from './observability';
import { ProblemError } from '../errors';
import { problemFor } from './problems';

/** What each parser error is, to the client. */
function problemOf(error: NodeJS.ErrnoException, server: http.Server): ProblemError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ProblemError(
        'request-timeout',
        `The request did not arrive in time (headers within ${server.headersTimeout / 1000} s, the whole request within ${server.requestTimeout / 1000} s).`,
      );
    case 'HPE_HEADER_OVERFLOW':
      return new ProblemError(
        'headers-too-large',
        `The request's headers are over the limit of ${http.maxHeaderSize} bytes.`,
      );
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new ProblemError(
        'payload-too-large',
        'The chunk extensions of the request body are too large.',
      );
    default:
      // llhttp's reason is a short fixed phrase ("Invalid header value char"), never the request's bytes.
      return new ProblemError(
        'malformed-request',
        `The request is not valid HTTP: ${(error as { reason?: string }).reason ?? error.message}.`,
      );
  }
}

/** A whole HTTP/1.1 response with a problem body, for a socket Express never saw. */
function rawProblemResponse(
  problem: ProblemError,
  requestId: string,
): { status: number; bytes: string } {
  const reply = problemFor(problem);
  const body = JSON.stringify({ ...(reply.body as object), request_id: requestId });
  const head = [
    `HTTP/1.1 ${reply.status} ${http.STATUS_CODES[reply.status]}`,
    'Content-Type: application/problem+json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'X-Content-Type-Options: nosniff',
    'Cache-Control: no-store',
    'Connection: close',
  ];
  return { status: reply.status, bytes: `${head.join('\r\n')}\r\n\r\n${body}` };
}

export function answerUnparsableRequests(
  server: http.Server,
  logger: Logger,
  metrics: Metrics,
): void {
  // The response in progress on each connection: a problem must not be written into the middle of one.
  const responses = new WeakMap<Duplex, http.ServerResponse>();
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) =>
    responses.set(req.socket, res),
  );

  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const inProgress = responses.get(socket);
    const midResponse =
      inProgress !== undefined && inProgress.headersSent && !inProgress.writableFinished;
    if (error.code === 'ECONNRESET' || !socket.writable || midResponse) {
      socket.destroy();
      return;
    }
    const requestId = uuidv7();
    const problem = problemOf(error, server);
    const { status, bytes } = rawProblemResponse(problem, requestId);
    socket.end(bytes, () => socket.destroy());
    metrics.observe({ requestId }, status, 0);
    logger.info({
      request_id: requestId,
      method: null,
      route: null,
      operation: null,
      status,
      error: error.code ?? null,
    });
  });
}
