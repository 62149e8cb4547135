/**
 * The variables: their defaults, a bad value stopping the service with the variable's name, and
 * the README's table made from the same table the parser reads.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig, parseLibraryShims } from '../src/config';
import { configurationTable } from '../src/config-docs';
import { projectRoot } from '../src/paths';

it('has the documented defaults', () => {
  expect(loadConfig({})).toMatchObject({
    rateLimitPerMinute: 600,
    authFailuresPerMinute: 60,
    trustProxy: false,
    redisTimeoutMs: 10,
    headersTimeoutSeconds: 10,
    requestTimeoutSeconds: 30,
    keepAliveTimeoutSeconds: 5,
    maxConnections: 1000,
    maxConnectionsPerAddress: 100,
    longPollsPerKey: 10,
    longPollsPerTenant: 50,
    statementTimeoutSeconds: 5,
    webhookTimeoutSeconds: 10,
    webhookRetryScheduleMs: [
      5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
    ],
    webhookAllowPrivateTargets: false,
    webhookEndpointsPerTenant: 20,
    webhookMaxInFlight: 64,
    webhookThreadNice: -20,
    webhookDnsServers: [],
    webhookDnsTimeoutMs: 2000,
  });
  expect(loadConfig({ WEBHOOK_ENDPOINTS_PER_TENANT: '1' }).webhookEndpointsPerTenant).toBe(1);
  expect(loadConfig({ WEBHOOK_MAX_IN_FLIGHT: '8' }).webhookMaxInFlight).toBe(8);
  expect(loadConfig({ WEBHOOK_THREAD_NICE: '-5' }).webhookThreadNice).toBe(-5);
  expect(loadConfig({ WEBHOOK_THREAD_NICE: '19' }).webhookThreadNice).toBe(19);
});

it('takes WEBHOOK_RETRY_SCHEDULE as durations, and WEBHOOK_ALLOW_PRIVATE_TARGETS as true or false', () => {
  expect(
    loadConfig({ WEBHOOK_RETRY_SCHEDULE: '250ms, 1s,2m,1h,1d' }).webhookRetryScheduleMs,
  ).toEqual([250, 1000, 120_000, 3_600_000, 86_400_000]);
  expect(
    loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_TIMEOUT_SECONDS: '0.5' }),
  ).toMatchObject({ webhookAllowPrivateTargets: true, webhookTimeoutSeconds: 0.5 });
});

it('takes WEBHOOK_DNS_SERVERS as addresses with optional ports', () => {
  expect(
    loadConfig({
      WEBHOOK_DNS_SERVERS: '10.0.0.2, 127.0.0.1:5353,[::1]:53',
      WEBHOOK_DNS_TIMEOUT_MS: '500',
    }),
  ).toMatchObject({
    webhookDnsServers: ['10.0.0.2', '127.0.0.1:5353', '[::1]:53'],
    webhookDnsTimeoutMs: 500,
  });
});

it("holds a tenant to five keys' long polls unless LONG_POLLS_PER_TENANT says otherwise", () => {
  expect(loadConfig({ LONG_POLLS_PER_KEY: '4' })).toMatchObject({
    longPollsPerKey: 4,
    longPollsPerTenant: 20,
  });
  expect(loadConfig({ LONG_POLLS_PER_KEY: '4', LONG_POLLS_PER_TENANT: '6' })).toMatchObject({
    longPollsPerKey: 4,
    longPollsPerTenant: 6,
  });
});

it('takes TRUST_PROXY as a hop count or as proxy addresses, subnets and named ranges', () => {
  expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
  expect(
    loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8,fd00::/8, 192.0.2.7' }).trustProxy,
  ).toEqual(['loopback', '10.0.0.0/8', 'fd00::/8', '192.0.2.7']);
});

it.each([
  ['TRUST_PROXY', 'true', {}],
  ['TRUST_PROXY', '10.0.0.0/33', {}],
  ['TRUST_PROXY', 'proxy.example.com', {}],
  ['AUTH_FAILURES_PER_MINUTE', '-1', {}],
  ['REDIS_TIMEOUT_MS', '0', {}],
  ['MAX_CONNECTIONS', 'many', {}],
  ['MAX_CONNECTIONS_PER_ADDRESS', '-5', {}],
  ['LONG_POLLS_PER_KEY', 'ten', {}],
  ['LONG_POLLS_PER_TENANT', '1.5', {}],
  ['KEEP_ALIVE_TIMEOUT_SECONDS', '0', {}],
  ['DATABASE_STATEMENT_TIMEOUT_SECONDS', '0', {}],
  ['HEADERS_TIMEOUT_SECONDS', '40', { REQUEST_TIMEOUT_SECONDS: '30' }],
  ['WEBHOOK_TIMEOUT_SECONDS', '0', {}],
  ['WEBHOOK_RETRY_SCHEDULE', '5s,,5m', {}],
  ['WEBHOOK_RETRY_SCHEDULE', '5 minutes', {}],
  ['WEBHOOK_RETRY_SCHEDULE', '8d', {}],
  ['WEBHOOK_RETRY_SCHEDULE', Array(21).fill('1s').join(','), {}],
  ['WEBHOOK_ALLOW_PRIVATE_TARGETS', 'yes', {}],
  ['WEBHOOK_ENDPOINTS_PER_TENANT', '0', {}],
  ['WEBHOOK_ENDPOINTS_PER_TENANT', '1000001', {}],
  ['WEBHOOK_ENDPOINTS_PER_TENANT', '20 endpoints', {}],
  ['WEBHOOK_MAX_IN_FLIGHT', '0', {}],
  ['WEBHOOK_MAX_IN_FLIGHT', '-3', {}],
  ['WEBHOOK_MAX_IN_FLIGHT', 'lots', {}],
  ['WEBHOOK_THREAD_NICE', '-21', {}],
  ['WEBHOOK_THREAD_NICE', '20', {}],
  ['WEBHOOK_THREAD_NICE', '--5', {}],
  ['WEBHOOK_THREAD_NICE', '-1.5', {}],
  ['WEBHOOK_DNS_SERVERS', 'ns.example.com', {}],
  ['WEBHOOK_DNS_SERVERS', '127.0.0.1:99999', {}],
  ['WEBHOOK_DNS_SERVERS', '10.0.0.2,,10.0.0.3', {}],
  ['WEBHOOK_DNS_TIMEOUT_MS', '0', {}],
])('refuses %s=%s, naming it', (name, value, others) => {
  expect(() => loadConfig({ ...others, [name]: value })).toThrow(ConfigError);
  expect(() => loadConfig({ ...others, [name]: value })).toThrow(name);
});

it('takes LIBRARY_SHIMS as on (the default) or off, and refuses anything else, naming it', () => {
  expect([undefined, '', 'on', 'off'].map(parseLibraryShims)).toEqual([true, true, true, false]);
  expect(() => parseLibraryShims('false')).toThrow(ConfigError);
  expect(() => parseLibraryShims('OFF')).toThrow('LIBRARY_SHIMS');
});

it("has the README's configuration table made from the table the parser reads", () => {
  const readme = fs.readFileSync(path.join(projectRoot, 'README.md'), 'utf8').split('\n');
  const start = readme.indexOf('## Configuration') + 2;
  const end = readme.indexOf('', start);
  // On a difference, `npm start -- --help --markdown` prints the table to paste.
  expect(readme.slice(start, end).join('\n')).toBe(configurationTable());
});
