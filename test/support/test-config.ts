import type { Config, DatabaseConfig } from '../../src/config';

/** The service's configuration for a test: port 0 on loopback, quiet logs, no CORS, a limit no test reaches. */
export function testConfig(database: DatabaseConfig, overrides: Partial<Config> = {}): Config {
  return { host: '127.0.0.1', port: 0, database, logLevel: 'silent', corsOrigins: [], shutdownGraceSeconds: 5, rateLimitPerMinute: 100_000, cleanupIntervalSeconds: 60, eventRetentionDays: 30, ...overrides };
}
