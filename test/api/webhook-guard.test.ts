/**
 * The SSRF guard with private targets not allowed (the service's default): registration refuses
 * plain http and every internal address class, however the address is spelt, naming `url`; a
 * name that resolves to one is refused too; and a delivery checks the address it actually
 * connects to, so a target that became internal after registration (DNS changed) gets nothing.
 */
import { v7 as uuidv7 } from 'uuid';
import { nowForDb } from '../../src/db/timestamps';
import { forbiddenAddress, targetGuard } from '../../src/webhooks/target-guard';
import { capturedLog } from '../support/captured-log';
import { scrapeMetrics } from '../support/metrics-scrape';
import { createResolver } from '../../src/webhooks/dns-lookups';
import { startNameServer, type NameServer } from '../support/name-server';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let receiver: WebhookReceiver;
let names: NameServer;
let key: string;
const log = capturedLog();

beforeAll(async () => {
  names = await startNameServer({
    'rebind.example': { addresses: ['93.184.215.14', '10.1.2.3'] },
    'public.example': { addresses: ['2606:4700::1111'] },
    'rebound.test': { addresses: ['127.0.0.1'] },
  });
  [api, receiver] = await Promise.all([
    startTestService({
      config: {
        webhookAllowPrivateTargets: false,
        webhookRetryScheduleMs: [60_000],
        webhookDnsServers: [names.address],
        logLevel: 'warn',
      },
      logDestination: log.stream,
    }),
    startReceiver(),
  ]);
  key = await api.createKey('guarded');
});
afterAll(async () => {
  await api.stop();
  await receiver.stop();
  await names.stop();
});

const json = { 'Content-Type': 'application/json' };
const register = (url: string) =>
  api.send('POST', '/v1/webhook-endpoints', { key, headers: json, body: JSON.stringify({ url }) });

it('starts without the warning that the guard is off', () => {
  expect(
    log.lines.filter((line) => String(line.msg).includes('WEBHOOK_ALLOW_PRIVATE_TARGETS')),
  ).toEqual([]);
});

describe('registration', () => {
  it.each([
    ['loopback', 'https://127.0.0.1/hook', 'a loopback address'],
    ['loopback, elsewhere in 127/8', 'https://127.8.9.10/hook', 'a loopback address'],
    ['private 10/8', 'https://10.0.0.1/hook', 'a private address'],
    ['private 172.16/12', 'https://172.16.5.4/hook', 'a private address'],
    ['private 192.168/16', 'https://192.168.0.1/hook', 'a private address'],
    [
      'link-local (cloud metadata)',
      'https://169.254.169.254/latest/meta-data',
      'a link-local address',
    ],
    ['multicast', 'https://224.0.0.1/hook', 'a multicast address'],
    ['unspecified', 'https://0.0.0.0/hook', 'the unspecified address'],
    ['broadcast', 'https://255.255.255.255/hook', 'the broadcast address'],
    [
      'shared (carrier-grade NAT)',
      'https://100.64.0.1/hook',
      'a shared (carrier-grade NAT) address',
    ],
    ['IPv6 loopback', 'https://[::1]/hook', 'a loopback address'],
    ['IPv6 unspecified', 'https://[::]/hook', 'the unspecified address'],
    ['IPv6 link-local', 'https://[fe80::1]/hook', 'a link-local address'],
    ['IPv6 unique-local fc00::/8', 'https://[fc00::1]/hook', 'a unique-local address'],
    ['IPv6 unique-local fd00::/8', 'https://[fd12:3456::1]/hook', 'a unique-local address'],
    ['IPv6 multicast', 'https://[ff02::1]/hook', 'a multicast address'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hook', 'an IPv4-mapped IPv6 address'],
    ['IPv4-mapped private, in hex', 'https://[::ffff:a00:1]/hook', 'an IPv4-mapped IPv6 address'],
    [
      'IPv4-compatible loopback',
      'https://[::127.0.0.1]/hook',
      'has the host ::7f00:1, a loopback address',
    ],
    [
      'IPv4-compatible loopback, in full',
      'https://[0:0:0:0:0:0:127.0.0.1]/hook',
      'a loopback address',
    ],
    ['IPv4-compatible private', 'https://[::10.0.0.1]/hook', 'a private address'],
    [
      'IPv4-compatible private 192.168/16, in hex',
      'https://[::c0a8:101]/hook',
      'a private address',
    ],
    ['IPv4-compatible link-local', 'https://[::169.254.169.254]/hook', 'a link-local address'],
    [
      'IPv4-compatible global address',
      'https://[::8.8.8.8]/hook',
      'an IPv4-compatible IPv6 address',
    ],
    ['NAT64 of a private address', 'https://[64:ff9b::a00:1]/hook', 'a reserved address (rfc6052)'],
    ['6to4 of loopback', 'https://[2002:7f00:1::1]/hook', 'a reserved address (6to4)'],
    ['loopback as one decimal number', 'https://2130706433/hook', 'a loopback address'],
    ['loopback in hex', 'https://0x7f000001/hook', 'a loopback address'],
    ['loopback in octal', 'https://017700000001/hook', 'a loopback address'],
    ['loopback, short form', 'https://127.1/hook', 'a loopback address'],
    ['unspecified as 0', 'https://0/hook', 'the unspecified address'],
    ['private, mixed notation', 'https://10.0x0.0.01/hook', 'a private address'],
  ])('refuses %s (%s), naming url', async (_, url, reason) => {
    const response = await register(url);
    expect(response.status).toBe(400);
    expect(response.json.type).toBe('/problems/invalid-request');
    expect(response.json.errors).toEqual([
      { in: 'body', pointer: '/url', message: expect.stringContaining(reason) },
    ]);
    expect(response.json.detail).toContain('/url');
  });

  it('refuses a name that resolves to a loopback address, without saying what it resolved to', async () => {
    const response = await register('https://rebound.test:8443/hook');
    expect(response.status).toBe(400);
    expect(response.json.errors).toEqual([
      {
        in: 'body',
        pointer: '/url',
        message: 'has the host rebound.test, which resolves to an address that is not allowed',
      },
    ]);
    expect(response.text).not.toMatch(/127\.0\.0\.1|::1|loopback/);
  });

  it.each([
    'https://localhost:8443/hook',
    'https://LocalHost/hook',
    'https://localhost./hook',
    'https://sub.localhost/hook',
    'https://api.sub.localhost:8443/hook',
    'https://public.example./hook',
  ])('refuses %s (localhost, names under it, trailing dots) without asking DNS', async (url) => {
    const host = new URL(url).hostname.replace(/\.$/, '');
    const response = await register(url);
    expect([response.status, response.json.errors?.[0]?.message]).toEqual([
      400,
      `has the host ${new URL(url).hostname}, which resolves to an address that is not allowed`,
    ]);
    expect(names.queries.get(host)).toBeUndefined();
  });

  it.each([
    ['https://93.184.215.14:22/hook', '22'],
    ['https://93.184.215.14:25/hook', '25'],
    ['https://93.184.215.14:80/hook', '80'],
    ['https://93.184.215.14:1023/hook', '1023'],
  ])('refuses %s: a webhook port is 443 or 1024 and above', async (url, port) => {
    const response = await register(url);
    expect([response.status, response.json.errors?.[0]]).toEqual([
      400,
      {
        in: 'body',
        pointer: '/url',
        message: `has the port ${port}: a webhook port is 443 or from 1024 to 65535`,
      },
    ]);
  });

  it('accepts ports 443, 1024 and 65535', async () => {
    for (const url of [
      'https://93.184.215.14:443/hook',
      'https://93.184.215.14:1024/hook',
      'https://93.184.215.14:65535/hook',
    ]) {
      const response = await register(url);
      expect([url, response.status]).toEqual([url, 201]);
      await api.send('DELETE', `/v1/webhook-endpoints/${response.json.webhook_endpoint_id}`, {
        key,
      });
    }
  });

  it('refuses plain http, and the same on a change of URL', async () => {
    const response = await register('http://93.184.215.14/hook');
    expect([response.status, response.json.errors]).toEqual([
      400,
      [
        {
          in: 'body',
          pointer: '/url',
          message:
            'must be an https URL; plain http and private addresses are allowed only where the service runs with WEBHOOK_ALLOW_PRIVATE_TARGETS=true, as make sandbox does',
        },
      ],
    ]);
    const accepted = await register('https://93.184.215.14/hook');
    expect(accepted.status).toBe(201);
    const path = `/v1/webhook-endpoints/${accepted.json.webhook_endpoint_id}`;
    const changed = await api.send('PATCH', path, {
      key,
      headers: json,
      body: JSON.stringify({ url: 'https://[::ffff:192.168.1.1]/x' }),
    });
    expect([changed.status, changed.json.errors[0].pointer]).toEqual([400, '/url']);
    expect((await api.send('GET', path, { key })).json.url).toBe('https://93.184.215.14/hook');
    await api.send('DELETE', path, { key });
  });

  it('refuses user information in the URL of a global address, before looking at the address', async () => {
    for (const url of [
      'https://user:pass@93.184.215.14/hook',
      'https://token@93.184.215.14/hook',
      'https://user:pass@127.0.0.1/hook',
    ]) {
      const response = await register(url);
      expect([url, response.status, response.json.errors]).toEqual([
        url,
        400,
        [
          {
            in: 'body',
            pointer: '/url',
            message: 'must not contain user information (user:password@)',
          },
        ],
      ]);
    }
  });

  it('accepts a global unicast address, IPv4 or IPv6', async () => {
    for (const url of [
      'https://93.184.215.14/hook',
      'https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hook',
    ]) {
      const response = await register(url);
      expect([url, response.status]).toEqual([url, 201]);
      await api.send('DELETE', `/v1/webhook-endpoints/${response.json.webhook_endpoint_id}`, {
        key,
      });
    }
  });

  it('refuses a name whose DNS answer includes an internal address, and accepts one that does not exist', async () => {
    const resolver = createResolver({
      servers: [names.address],
      timeoutMs: 1000,
      answerLocalhost: false,
    });
    const guard = targetGuard({ allowPrivateTargets: false, resolver, lookupTimeoutMs: 1000 });
    expect(await guard.refusalOf('https://rebind.example/x', 't')).toBe(
      'has the host rebind.example, which resolves to an address that is not allowed',
    );
    expect(await guard.refusalOf('https://public.example/x', 't')).toBeUndefined();
    expect(await guard.refusalOf('https://nowhere.example/x', 't')).toBeUndefined();
    const open = targetGuard({ allowPrivateTargets: true, resolver, lookupTimeoutMs: 1000 });
    expect(await open.refusalOf('http://127.0.0.1:3000/x', 't')).toBeUndefined();
    expect(await open.refusalOf('http://127.0.0.1:80/x', 't')).toBeUndefined();
    expect(await open.refusalOf('http://127.0.0.1:22/x', 't')).toBe(
      'has the port 22: a webhook port is 443 or from 1024 to 65535 (or 80 for http)',
    );
    expect(await open.refusalOf('ftp://127.0.0.1/x', 't')).toBe('must be an https URL, not ftp:');
  });

  it('classifies addresses with ipaddr.js: only global unicast passes', () => {
    expect(forbiddenAddress('8.8.8.8')).toBeUndefined();
    expect(forbiddenAddress('2001:4860:4860::8888')).toBeUndefined();
    expect(forbiddenAddress('192.0.2.1')).toBe('a reserved address (reserved)');
    expect(forbiddenAddress('::ffff:8.8.8.8')).toBe('an IPv4-mapped IPv6 address');
    expect(forbiddenAddress('::7f00:1')).toBe('a loopback address');
    expect(forbiddenAddress('::808:808')).toBe('an IPv4-compatible IPv6 address');
    expect(forbiddenAddress('::1')).toBe('a loopback address');
    expect(forbiddenAddress('::')).toBe('the unspecified address');
    expect(forbiddenAddress('not-an-address')).toBe('not an IP address');
  });
});

describe('delivery', () => {
  /** An endpoint written straight to the database, as if its host had resolved elsewhere when it was registered. */
  async function endpointAt(url: string): Promise<string> {
    const tenant = await api.service.knex('tenants').first('tenant_id').where('name', 'guarded');
    const id = uuidv7();
    const now = nowForDb();
    await api.service.knex('webhook_endpoints').insert({
      webhook_endpoint_id: id,
      tenant_id: tenant.tenant_id,
      url,
      event_types: null,
      description: '',
      enabled: true,
      secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
      created_at: now,
      updated_at: now,
    });
    return id;
  }

  it('refuses, where it connects, a name that now resolves to loopback and a numeric loopback host: the receiver gets nothing', async () => {
    const port = new URL(receiver.origin).port;
    const byName = await endpointAt(`http://rebound.test:${port}/by-name`);
    const byNumber = await endpointAt(`http://2130706433:${port}/by-number`);
    const refused = async () =>
      (await scrapeMetrics(api.baseUrl)).value('webhook_deliveries_total{outcome="refused"}');
    const before = await refused();
    expect(
      (await api.send('POST', '/v1/projects', { key, headers: json, body: '{"name": "p"}' }))
        .status,
    ).toBe(201);
    const failed = async (endpointId: string) => {
      const deadline = Date.now() + 5000;
      for (;;) {
        const log = (
          await api.send('GET', `/v1/webhook-endpoints/${endpointId}/deliveries`, { key })
        ).json.data;
        if (log.some((d: { status: string }) => d.status === 'failed') || Date.now() > deadline)
          return log;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const [byNameLog, byNumberLog] = await Promise.all([failed(byName), failed(byNumber)]);
    expect(byNameLog.find((d: { status: string }) => d.status === 'failed')).toMatchObject({
      attempt: 1,
      response_status: null,
      error: 'refused: rebound.test resolves to an address that is not allowed',
    });
    expect(byNumberLog.find((d: { status: string }) => d.status === 'failed')).toMatchObject({
      attempt: 1,
      response_status: null,
      error: 'refused: 127.0.0.1 is a loopback address',
    });
    expect(receiver.received).toEqual([]);
    expect((await refused())! - before!).toBe(2);
  });
});
