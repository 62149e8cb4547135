/**
 * One cell of the matrix of hostile tenants (issue 44), on MariaDB: hostile tenants whose
 * receivers and name servers misbehave in one way, each with its endpoints and events, beside a
 * bystander tenant that writes steadily to one endpoint whose name resolves at once. A cell
 * reports what a bystander and an operator would check: the bystander's webhook delays from each
 * 201 to its delivery, none lost or sent twice, the delivery thread alive (no restart), its heap
 * and the service's RSS.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { issueApiKey } from '../../src/cli/issue-api-key';
import { createRepositories } from '../../src/all-repositories';
import { createMysqlDatabase } from '../support/mysql-database';
import { startNameServer, type NameRecord } from '../support/name-server';
import { withKnex } from './fixture';
import { serviceArguments, startServerProcess } from './processes';

export type ReceiverKind =
  'ok' | 'hang' | 'drip' | 'huge-body' | 'huge-headers' | 'redirect' | 'reset' | '500' | '410';
export type NameKind = 'ok' | 'never' | 'once' | 'late' | 'fifty' | 'changing';

export interface HostileCell {
  name: string;
  receivers: ReceiverKind;
  /** The hostile tenants' names, cycled over the tenants (8 `once` and 7 `late`: a list). */
  names: NameKind | NameKind[];
  endpoints: number;
  /** Characters of each event's description. */
  eventChars: number;
  tenants: number;
  /** Events each hostile tenant makes (each sent to all its endpoints). */
  events: number;
}

export interface CellResult {
  cell: HostileCell;
  /** The bystander's delays, milliseconds, sorted. */
  delays: number[];
  lost: number;
  sentTwice: number;
  threadRestarts: number;
  threadHeapMb: number;
  threadHeapLimitMb: number;
  rssMb: number;
  seconds: number;
}

export interface CellOptions {
  mysqlUrl: string;
  /** How long the bystander writes, and the hostile tenants with it. */
  seconds: number;
  /** Extra environment for the service. */
  env?: Record<string, string>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const percentile = (sorted: number[], p: number) =>
  sorted.length === 0
    ? NaN
    : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** One server for every receiver: `/bystander` answers 204 at once, `/hostile` as the cell says. */
async function startReceivers(kind: ReceiverKind) {
  const arrived = new Map<string, number>();
  const seen = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server = http.createServer({ maxHeaderSize: 64 * 1024 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/bystander') {
        const id = String(req.headers['webhook-id']);
        seen.set(id, (seen.get(id) ?? 0) + 1);
        try {
          const event = JSON.parse(Buffer.concat(chunks).toString()) as {
            data: { object: { name?: string } };
          };
          const name = event.data.object.name;
          if (name && !arrived.has(name)) arrived.set(name, performance.now());
        } catch {
          // not an event
        }
        return res.writeHead(204).end();
      }
      answerHostile(kind, req, res);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    arrived,
    sentTwice: () => [...seen.values()].filter((count) => count > 1).length,
    stop: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function answerHostile(kind: ReceiverKind, req: http.IncomingMessage, res: http.ServerResponse) {
  switch (kind) {
    case 'ok':
      return res.writeHead(204).end();
    case 'hang':
      return; // until the client gives up
    case 'drip': {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('.'), 500);
      res.on('close', () => clearInterval(timer));
      return;
    }
    case 'huge-body': {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let sent = 0;
      const more = () => {
        while (sent < 200 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      res.on('close', () => (sent = Infinity));
      return more();
    }
    case 'huge-headers': {
      const headers: Record<string, string> = {};
      for (let i = 0; i < 2000; i++) headers[`x-h${i}`] = 'v'.repeat(20);
      try {
        return res.writeHead(200, headers).end();
      } catch {
        return res.destroy();
      }
    }
    case 'redirect':
      return res.writeHead(307, { location: 'http://127.0.0.1:1/elsewhere' }).end();
    case 'reset':
      return req.socket.destroy();
    case '500':
      return res.writeHead(500).end('no');
    case '410':
      return res.writeHead(410).end();
  }
}

/** What the name server says of a hostile name of this kind; `changing` names are moved by the caller. */
function nameRecord(kind: NameKind): NameRecord {
  switch (kind) {
    case 'ok':
      return { addresses: ['127.0.0.1'], ttl: 300 };
    case 'never':
      return { addresses: ['127.0.0.1'], silent: 'never' };
    case 'once':
      return { addresses: ['127.0.0.1'], silent: 'once', ttl: 1 };
    case 'late':
      return { addresses: ['127.0.0.1'], delayMs: 30_000, ttl: 1 };
    case 'fifty':
      return {
        addresses: Array.from(
          { length: 50 },
          (_, i) => `127.0.${Math.floor(i / 250)}.${(i % 250) + 1}`,
        ),
        ttl: 1,
      };
    case 'changing':
      return { addresses: ['127.0.0.1'], ttl: 1 };
  }
}

async function scrape(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`).catch(() => undefined);
  return response?.ok ? response.text() : '';
}
const metric = (text: string, name: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
};

export async function runCell(cell: HostileCell, options: CellOptions): Promise<CellResult> {
  const database = await createMysqlDatabase(options.mysqlUrl, 'tt_bench_hostile');
  const names = await startNameServer({
    'bystander.bench': { addresses: ['127.0.0.1'], ttl: 300 },
  });
  const receivers = await startReceivers(cell.receivers);
  const kinds = Array.isArray(cell.names) ? cell.names : [cell.names];
  const hostNames: string[][] = Array.from({ length: cell.tenants }, (_, t) =>
    Array.from({ length: cell.endpoints }, (_, e) => `h${t}-${e}.bench`),
  );
  hostNames.forEach((hosts, t) =>
    hosts.forEach((host) => names.names.set(host, nameRecord(kinds[t % kinds.length]))),
  );
  // Registration must resolve: every hostile name answers until its endpoints exist.
  const registered = new Map([...names.names].map(([host, record]) => [host, record]));
  for (const host of hostNames.flat()) names.names.set(host, { addresses: ['127.0.0.1'], ttl: 1 });
  const service = await startServerProcess(serviceArguments(), {
    DATABASE_URL: (database.config as { url: string }).url,
    RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_DNS_SERVERS: names.address,
    WEBHOOK_ENDPOINTS_PER_TENANT: String(Math.max(20, cell.endpoints)),
    ...options.env,
  });
  const started = performance.now();
  let heapMb = 0;
  let heapLimitMb = 0;
  let restarts = 0;
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      const text = await scrape(service.url);
      heapMb = Math.max(heapMb, metric(text, 'webhook_thread_heap_used_bytes') / 2 ** 20);
      heapLimitMb = Math.max(
        heapLimitMb,
        metric(text, 'webhook_thread_heap_limit_bytes') / 2 ** 20,
      );
      restarts = Math.max(restarts, metric(text, 'webhook_thread_restarts_total'));
      await sleep(500);
    }
  })();
  try {
    const [bystander, ...hostile] = await withKnex(database.config, async (knex) => {
      const repositories = createRepositories(knex);
      const keys: string[] = [];
      for (const tenant of ['bystander', ...hostNames.map((_, t) => `hostile-${t}`)])
        keys.push((await issueApiKey(repositories, tenant, ['read', 'write'])).key);
      return keys;
    });
    const call = async (key: string, method: string, path: string, body: unknown) => {
      const response = await fetch(`${service.url}${path}`, {
        method,
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      await response.arrayBuffer();
      return response.status;
    };
    const port = receivers.port;
    await call(bystander, 'POST', '/v1/webhook-endpoints', {
      url: `http://bystander.bench:${port}/bystander`,
    });
    await Promise.all(
      hostile.map(async (key, t) => {
        for (const host of hostNames[t]) {
          const status = await call(key, 'POST', '/v1/webhook-endpoints', {
            url: `http://${host}:${port}/hostile`,
          });
          if (status !== 201) throw new Error(`registering ${host} answered ${status}`);
        }
      }),
    );
    for (const [host, record] of registered) names.names.set(host, record);
    const changing = kinds.includes('changing')
      ? setInterval(() => {
          const address = `127.0.0.${1 + Math.floor(Math.random() * 3)}`;
          hostNames.forEach((hosts, t) => {
            if (kinds[t % kinds.length] === 'changing')
              for (const host of hosts) names.names.set(host, { addresses: [address], ttl: 1 });
          });
        }, 1000)
      : undefined;

    const sent = new Map<string, number>();
    let writing = true;
    const bystanderWrites = (async () => {
      for (let i = 0; writing; i++) {
        const name = `bystander ${i}`;
        const at = performance.now();
        if ((await call(bystander, 'POST', '/v1/projects', { name })) === 201) sent.set(name, at);
        await sleep(200);
      }
    })();
    const description = 'd'.repeat(cell.eventChars);
    const hostileWrites = hostile.map(async (key, t) => {
      for (let i = 0; i < cell.events && writing; i++)
        await call(key, 'POST', '/v1/projects', { name: `hostile ${t} ${i}`, description });
    });
    await sleep(options.seconds * 1000);
    writing = false;
    await Promise.all([bystanderWrites, ...hostileWrites]);
    // The bystander's last webhooks: 10 s at the most.
    for (let waited = 0; waited < 10_000 && receivers.arrived.size < sent.size; waited += 100)
      await sleep(100);
    if (changing) clearInterval(changing);
    watching = false;
    await watcher;
    const delays = [...sent]
      .map(([name, at]) => (receivers.arrived.get(name) ?? Infinity) - at)
      .sort((a, b) => a - b);
    return {
      cell,
      delays: delays.filter(Number.isFinite),
      lost: delays.filter((ms) => !Number.isFinite(ms)).length,
      sentTwice: receivers.sentTwice(),
      threadRestarts: restarts,
      threadHeapMb: heapMb,
      threadHeapLimitMb: heapLimitMb,
      rssMb: service.peakRssMb(),
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    watching = false;
    await service.stop();
    await receivers.stop();
    await names.stop();
    await database.drop();
  }
}
