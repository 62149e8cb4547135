import type { Config, DatabaseConfig } from '../../src/config';

/**
 * The service's configuration for a test: port 0 on loopback, quiet logs, no CORS, limits no
 * test reaches, and the service's own defaults for the timeouts. Redis may take a second to
 * answer: under a loaded test machine a few milliseconds is not always enough, and a test of
 * shared counts must not fall back to counting in memory.
 */
export function testConfig(database: DatabaseConfig, overrides: Partial<Config> = {}): Config {
  return {
    host: '127.0.0.1',
    port: 0,
    database,
    logLevel: 'silent',
    corsOrigins: [],
    apiVersionsDeprecated: new Map(),
    shutdownGraceSeconds: 5,
    rateLimitPerMinute: 100_000,
    authFailuresPerMinute: 100_000,
    trustProxy: false,
    redisTimeoutMs: 1000,
    headersTimeoutSeconds: 10,
    requestTimeoutSeconds: 30,
    keepAliveTimeoutSeconds: 5,
    maxConnections: 1000,
    maxConnectionsPerAddress: 1000,
    longPollsPerKey: 1000,
    longPollsPerTenant: 1000,
    bulkChangesPerInstance: 4,
    slowReaderTimeoutSeconds: 30,
    statementTimeoutSeconds: 5,
    cleanupIntervalSeconds: 60,
    eventRetentionDays: 30,
    webhookTimeoutSeconds: 10,
    webhookRetryScheduleMs: [
      5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
    ],
    webhookAllowPrivateTargets: false,
    webhookEndpointsPerTenant: 20,
    webhookMaxInFlight: 64,
    // Inside a test runner's worker the delivery thread keeps its priority; a test of its own raises it.
    webhookThreadNice: 0,
    // Nothing listens there: no test's lookup leaves the machine. A test that needs names runs a name server of its own.
    webhookDnsServers: ['127.0.0.1:1'],
    webhookDnsTimeoutMs: 2000,
    ...overrides,
  };
}
