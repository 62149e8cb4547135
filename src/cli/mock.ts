/**
 * `npm run mock` (`make mock`): Prism's mock of every supported API version on one port (4010),
 * for teams that code against the contract before the backend is ready. A request is answered
 * by the mock of the version its `Api-Version` header names, the newest's without one; a header
 * naming anything else is the service's own `400 /problems/unsupported-api-version`. Each
 * version's mock is a Prism of its own, on a loopback port, serving that version's document.
 *
 *   npm run mock [-- --dynamic] [--port 4010]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ProblemError } from '../errors';
import { requestedVersion } from '../http/api-version';
import { requestIdFor } from '../http/observability';
import { problemFor } from '../http/problems';
import { projectRoot } from '../paths';
import { documentFileOf } from '../versions/documents';
import { newestVersion, supportedVersions } from '../versions/versions';
import { requestChecks } from './mock-requests';
import { endWithThisProcess, onStopSignal, stopWithParent } from './process-lifetime';

/** The most of a request's body the mock reads: past it, the service's 413. */
const maxBodyBytes = 1024 * 1024;

/** A free loopback port, as the system gives one. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

function startPrism(version: string, port: number, dynamic: boolean): ChildProcess {
  const prism = path.join(projectRoot, 'node_modules', '.bin', 'prism');
  const args = ['mock', documentFileOf(version), '--host', '127.0.0.1', '--port', String(port)];
  return endWithThisProcess(
    spawn(prism, dynamic ? [...args, '--dynamic'] : args, {
      stdio: ['ignore', 'ignore', 'inherit'],
    }),
  );
}

/** The problem the service gives an unsupported version, as the mock gives it. */
function refuse(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  error: ProblemError,
  version?: string,
): void {
  const problem = problemFor(error);
  const requestId = requestIdFor(req.headers['x-request-id']);
  res.writeHead(problem.status, {
    'Content-Type': 'application/problem+json; charset=utf-8',
    'X-Request-Id': requestId,
    ...problem.headers,
    // What the service says of every answer given in a version.
    ...(version === undefined ? {} : { 'Api-Version': version, Vary: 'Api-Version' }),
  });
  res.end(JSON.stringify({ ...(problem.body as object), request_id: requestId }));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      dynamic: { type: 'boolean', default: false },
      port: { type: 'string', default: '4010' },
    },
  });
  const ports = new Map<string, number>();
  const mocks: ChildProcess[] = [];
  for (const version of supportedVersions) {
    const port = await freePort();
    ports.set(version, port);
    mocks.push(startPrism(version, port, values.dynamic!));
  }
  const check = await requestChecks();
  const forward = (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    port: number,
    body: Buffer,
  ) => {
    const upstream = http.request(
      { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.once('error', () => {
      // Its Prism is still starting, or has stopped.
      if (!res.headersSent) res.writeHead(503, { 'Retry-After': '1' });
      res.end();
    });
    upstream.end(body);
  };
  const front = http.createServer((req, res) => {
    const header = req.headers['api-version'];
    let version: string;
    try {
      version = requestedVersion(Array.isArray(header) ? header.join(',') : header, newestVersion);
    } catch (error) {
      if (error instanceof ProblemError) return refuse(req, res, error);
      throw error;
    }
    const chunks: Buffer[] = [];
    let length = 0;
    req.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (length <= maxBodyBytes) chunks.push(chunk);
    });
    req.once('end', () => {
      if (length > maxBodyBytes)
        return refuse(
          req,
          res,
          new ProblemError(
            'payload-too-large',
            `The request body is over the limit of ${maxBodyBytes} bytes.`,
          ),
          version,
        );
      const body = Buffer.concat(chunks);
      const refusal = check(version, req, body);
      if (refusal) return refuse(req, res, refusal, version);
      forward(req, res, ports.get(version)!, body);
    });
  });
  front.listen(Number(values.port), '127.0.0.1', () =>
    console.log(
      `Mock of every API version on http://127.0.0.1:${values.port}/v1 (Api-Version picks one: ${supportedVersions.join(', ')}; none: ${newestVersion}).`,
    ),
  );
  const stop = onStopSignal(() => {
    for (const mock of mocks) mock.kill('SIGTERM');
    front.close(() => process.exit(0));
  });
  stopWithParent(stop);
}

main().catch((error) => {
  console.error(`mock: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
