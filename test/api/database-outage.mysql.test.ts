/**
 * MySQL only: the service reaches its database through a TCP relay the test can cut, to see
 * what a client sees while the database is unreachable and after it returns.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { startService, type RunningService } from '../../src/server';
import { testConfig } from '../support/test-config';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { generateApiKey, hashApiKey } from '../../src/api-key-format';
import { createRepositories } from '../../src/all-repositories';
import { assertConformsToContract } from '../support/contract';

class Relay {
  private sockets = new Set<net.Socket>();
  private server?: net.Server;
  port = 0;

  constructor(private target: { host: string; port: number }) {}

  async open(): Promise<void> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server!.address() as AddressInfo).port;
  }

  async cut(): Promise<void> {
    const closed = new Promise((resolve) => this.server!.close(resolve));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}

let database: TestDatabase;
let relay: Relay;
let service: RunningService;
let key: string;

beforeAll(async () => {
  database = await createTestDatabase();
  const url = new URL((database.config as { url: string }).url);
  relay = new Relay({ host: url.hostname, port: Number(url.port || 3306) });
  await relay.open();
  url.host = `127.0.0.1:${relay.port}`;
  service = await startService(testConfig({ client: 'mysql', url: url.toString() }));
  key = generateApiKey();
  const repositories = createRepositories(service.knex);
  const tenant = await repositories.tenants.findOrCreate('acme');
  await repositories.apiKeys.insert(tenant.tenant_id, hashApiKey(key), ['read', 'write']);
});
afterAll(async () => {
  await service.stop();
  await relay.cut();
  await database.drop();
});

async function call(method: string, path: string, body?: unknown) {
  const started = Date.now();
  const res = await fetch(service.url + path, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (path.startsWith('/v1'))
    await assertConformsToContract(method, path, {
      status: res.status,
      headers: res.headers,
      text,
    });
  return {
    status: res.status,
    headers: res.headers,
    json: text ? JSON.parse(text) : undefined,
    ms: Date.now() - started,
  };
}

it('answers 503 with Retry-After while the database is unreachable, and recovers by itself', async () => {
  const created = await call('POST', '/v1/projects', { name: 'before' });
  expect(created.status).toBe(201);

  await relay.cut();
  for (const [method, path, body] of [
    ['POST', '/v1/projects', { name: 'during' }],
    ['GET', `/v1/projects/${created.json.project_id}`],
    ['GET', '/v1/projects'],
  ] as const) {
    const res = await call(method, path, body);
    expect(res.status).toBe(503);
    expect(res.json.type).toBe('/problems/service-unavailable');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(res.ms).toBeLessThan(15000);
  }
  expect((await call('GET', '/readyz')).status).toBe(503);

  await relay.open();
  expect((await call('GET', '/readyz')).status).toBe(200);
  const after = await call('GET', '/v1/projects');
  expect(after.status).toBe(200);
  expect(after.json.data.map((p: { name: string }) => p.name)).toEqual(['before']);
});
