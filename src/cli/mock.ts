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
import { problemFor } from '../http/problems';
import { projectRoot } from '../paths';
import { documentFileOf } from '../versions/documents';
import { newestVersion, supportedVersions } from '../versions/versions';

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
  return spawn(prism, dynamic ? [...args, '--dynamic'] : args, {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** The problem the service gives an unsupported version, as the mock gives it. */
function refuse(res: http.ServerResponse, error: ProblemError): void {
  const problem = problemFor(error);
  res.writeHead(problem.status, { 'Content-Type': 'application/problem+json; charset=utf-8' });
  res.end(JSON.stringify(problem.body));
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
  const front = http.createServer((req, res) => {
    const header = req.headers['api-version'];
    let version: string;
    try {
      version = requestedVersion(Array.isArray(header) ? header.join(',') : header, newestVersion);
    } catch (error) {
      if (error instanceof ProblemError) return refuse(res, error);
      throw error;
    }
    const upstream = http.request(
      {
        host: '127.0.0.1',
        port: ports.get(version),
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
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
    req.pipe(upstream);
  });
  front.listen(Number(values.port), '127.0.0.1', () =>
    console.log(
      `Mock of every API version on http://127.0.0.1:${values.port}/v1 (Api-Version picks one: ${supportedVersions.join(', ')}; none: ${newestVersion}).`,
    ),
  );
  const stop = () => {
    for (const mock of mocks) mock.kill('SIGTERM');
    front.close(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error) => {
  console.error(`mock: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
