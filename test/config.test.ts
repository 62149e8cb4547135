/** The limits' variables: their defaults, and a bad value stopping the service with the variable's name. */
import { ConfigError, loadConfig } from '../src/config';

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
    statementTimeoutSeconds: 5,
    webhookTimeoutSeconds: 10,
    webhookRetryScheduleMs: [5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
    webhookAllowPrivateTargets: false,
  });
});

it('takes WEBHOOK_RETRY_SCHEDULE as durations, and WEBHOOK_ALLOW_PRIVATE_TARGETS as true or false', () => {
  expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '250ms, 1s,2m,1h,1d' }).webhookRetryScheduleMs).toEqual([250, 1000, 120_000, 3_600_000, 86_400_000]);
  expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_TIMEOUT_SECONDS: '0.5' })).toMatchObject({ webhookAllowPrivateTargets: true, webhookTimeoutSeconds: 0.5 });
});

it('takes TRUST_PROXY as a hop count or as proxy addresses, subnets and named ranges', () => {
  expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
  expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8,fd00::/8, 192.0.2.7' }).trustProxy).toEqual(['loopback', '10.0.0.0/8', 'fd00::/8', '192.0.2.7']);
});

it.each([
  ['TRUST_PROXY', 'true', {}],
  ['TRUST_PROXY', '10.0.0.0/33', {}],
  ['TRUST_PROXY', 'proxy.example.com', {}],
  ['AUTH_FAILURES_PER_MINUTE', '-1', {}],
  ['REDIS_TIMEOUT_MS', '0', {}],
  ['MAX_CONNECTIONS', 'many', {}],
  ['KEEP_ALIVE_TIMEOUT_SECONDS', '0', {}],
  ['DATABASE_STATEMENT_TIMEOUT_SECONDS', '0', {}],
  ['HEADERS_TIMEOUT_SECONDS', '40', { REQUEST_TIMEOUT_SECONDS: '30' }],
  ['WEBHOOK_TIMEOUT_SECONDS', '0', {}],
  ['WEBHOOK_RETRY_SCHEDULE', '5s,,5m', {}],
  ['WEBHOOK_RETRY_SCHEDULE', '5 minutes', {}],
  ['WEBHOOK_RETRY_SCHEDULE', '8d', {}],
  ['WEBHOOK_RETRY_SCHEDULE', Array(21).fill('1s').join(','), {}],
  ['WEBHOOK_ALLOW_PRIVATE_TARGETS', 'yes', {}],
])('refuses %s=%s, naming it', (name, value, others) => {
  expect(() => loadConfig({ ...others, [name]: value })).toThrow(ConfigError);
  expect(() => loadConfig({ ...others, [name]: value })).toThrow(name);
});
