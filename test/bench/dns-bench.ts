/**
 * `make bench`, abuse part (d), on MariaDB: one tenant whose 20 endpoints' names resolve once and
 * then never (its name server goes silent) changes them 40 times at once to names that never
 * resolve, while both it and another tenant write; the other tenant's endpoint resolves at once.
 * Prints how long the 40 changes took to be answered (target: each within 10 s) and the other
 * tenant's webhook delay, from its create's 201 to the delivery (target: p99 under 2 s). The name
 * server is a real one on loopback (WEBHOOK_DNS_SERVERS).
 *
 * BENCH_DNS_SECONDS: how long both tenants write (20).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { issueApiKey } from '../../src/cli/issue-api-key';
import { createRepositories } from '../../src/all-repositories';
import { createMysqlDatabase } from '../support/mysql-database';
import { startNameServer } from '../support/name-server';
import { withKnex } from './fixture';
import { serviceArguments, startServerProcess, webhookServiceEnv } from './processes';
import { fmt, mark } from './report';

const seconds = Number(process.env.BENCH_DNS_SECONDS ?? 20);
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Answers every delivery at once, noting when each project's event arrived. */
async function receiver() {
  const arrived = new Map<string, number>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      try {
        const event = JSON.parse(body) as { data: { object: { name?: string } } };
        if (event.data.object.name) arrived.set(event.data.object.name, performance.now());
      } catch {
        // not an event
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    arrived,
    stop: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function slowNameServer(mysqlUrl: string): Promise<void> {
  const database = await createMysqlDatabase(mysqlUrl, 'tt_bench_dns');
  const names = await startNameServer({
    'bystander.bench': { addresses: ['127.0.0.1'], ttl: 300 },
  });
  const target = await receiver();
  for (let i = 0; i < 20; i++)
    names.names.set(`once${i}.bench`, { addresses: ['127.0.0.1'], silent: 'once', ttl: 1 });
  for (let i = 0; i < 40; i++)
    names.names.set(`never${i}.bench`, { addresses: ['127.0.0.1'], silent: 'never' });
  const service = await startServerProcess(
    serviceArguments(),
    webhookServiceEnv((database.config as { url: string }).url, names.address),
  );
  try {
    const [hostile, other] = await withKnex(database.config, async (knex) => {
      const repositories = createRepositories(knex);
      return [
        (await issueApiKey(repositories, 'hostile', ['read', 'write'])).key,
        (await issueApiKey(repositories, 'bystander', ['read', 'write'])).key,
      ];
    });
    const call = (key: string, method: string, path: string, body: unknown) =>
      fetch(`${service.url}${path}`, {
        method,
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    const endpointIds: string[] = [];
    for (let i = 0; i < 20; i++) {
      const created = await call(hostile, 'POST', '/v1/webhook-endpoints', {
        url: `http://once${i}.bench:${target.port}/hostile`,
      });
      endpointIds.push(
        ((await created.json()) as { webhook_endpoint_id: string }).webhook_endpoint_id,
      );
    }
    await call(other, 'POST', '/v1/webhook-endpoints', {
      url: `http://bystander.bench:${target.port}/bystander`,
    });
    // Both write: the hostile tenant 20 projects a second (each an event for its 20 endpoints), the other 5.
    const sent = new Map<string, number>();
    let writing = true;
    const writer = async (key: string, prefix: string, perSecond: number) => {
      for (let i = 0; writing; i++) {
        const name = `${prefix} ${i}`;
        const response = await call(key, 'POST', '/v1/projects', { name });
        if (response.status === 201 && prefix === 'bystander') sent.set(name, performance.now());
        await sleep(1000 / perSecond);
      }
    };
    const writers = [writer(hostile, 'hostile', 20), writer(other, 'bystander', 5)];
    await sleep(3000); // the once-names' single answers are used up and their TTLs run out
    const changesStarted = performance.now();
    const changes = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const response = await call(
          hostile,
          'PATCH',
          `/v1/webhook-endpoints/${endpointIds[i % 20]}`,
          {
            url: `http://never${i}.bench:${target.port}/hostile`,
          },
        );
        return { status: response.status, ms: performance.now() - changesStarted };
      }),
    );
    await sleep(Math.max(0, seconds * 1000 - (performance.now() - changesStarted) - 3000));
    writing = false;
    await Promise.all(writers);
    await sleep(3000);
    const delays = [...sent]
      .map(([name, at]) => (target.arrived.get(name) ?? Infinity) - at)
      .sort((a, b) => a - b);
    const undelivered = delays.filter((ms) => ms === Infinity).length;
    const slowest = Math.max(...changes.map((change) => change.ms));
    const p99 = percentile(delays, 99);
    console.log(
      `\n## (d) A tenant's silent name server: 20 endpoints whose names resolved once, changed 40 times at once to names that never resolve, while two tenants write, ${seconds} s\n`,
    );
    console.log(
      `- the 40 changes: ${changes.filter((c) => c.status === 400).length} answered 400, ${changes.filter((c) => c.status !== 400).length} otherwise; the slowest in ${fmt(slowest / 1000, 2)} s (each within 10 s: ${mark(slowest < 10_000)})`,
    );
    console.log(
      `- the other tenant's webhooks: ${delays.length - undelivered} of ${delays.length} delivered; delay from the 201 p50 ${fmt(percentile(delays, 50), 1)} ms, p99 ${fmt(p99, 1)} ms (< 2 s: ${mark(p99 < 2000 && undelivered === 0)})`,
    );
  } finally {
    await service.stop();
    await target.stop();
    await names.stop();
    await database.drop();
  }
}
