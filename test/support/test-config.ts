import type { Config, DatabaseConfig } from '../../src/config';

/**
 * The service's configuration for a test: port 0 on loopback, quiet logs, no CORS, a limit no
 * test reaches, and the service's own defaults for the timeouts.
 */
export function testConfig(database: DatabaseConfig, overrides: Partial<Config> = {}): Config {
  return {
    host: '127.0.0.1',
    port: 0,
    database,
    logLevel: 'silent',
    corsOrigins: [],
    shutdownGraceSeconds: 5,
    rateLimitPerMinute: 100_000,
    headersTimeoutSeconds: 10,
    requestTimeoutSeconds: 30,
    keepAliveTimeoutSeconds: 5,
    maxConnections: 1000,
    ...overrides,
  };
}
