/**
 * The sandbox's configuration, shared by `npm run sandbox` and `npm run contract -- verify-pact`:
 * production's behaviour on a throwaway SQLite file, with webhooks allowed to reach this machine.
 */
import { ConfigError, loadConfig, type Config } from '../config';

/** Failed deliveries come again soon, so a receiver being written sees its retries within a minute. */
export const sandboxRetrySchedule = [2_000, 10_000, 30_000];

/** `host`: where it listens; loopback unless the user says otherwise (HOST is not read). */
export function sandboxConfig(file: string, host = '127.0.0.1'): Config {
  const base = loadConfig({ ...process.env, DATABASE_URL: undefined });
  if (process.env.DATABASE_URL) {
    throw new ConfigError(
      process.env.DATABASE_URL.startsWith('mysql:')
        ? 'the sandbox never touches a MySQL database: unset DATABASE_URL (the sandbox makes a throwaway SQLite file)'
        : 'the sandbox makes its own SQLite file: unset DATABASE_URL, and use --keep PATH to keep one',
    );
  }
  return {
    ...base,
    host,
    database: { client: 'sqlite', filename: file },
    webhookAllowPrivateTargets: true,
    webhookRetryScheduleMs: sandboxRetrySchedule,
  };
}
