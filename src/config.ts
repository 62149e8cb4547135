/**
 * Every environment variable the service reads, read once, typed, with defaults. A bad value
 * stops the process at start-up with a message naming the variable.
 */
import path from 'node:path';
import { defaultSqliteFile } from './paths';

export type DatabaseConfig =
  | { client: 'sqlite'; filename: string }
  | { client: 'mysql'; url: string };

export interface Config {
  host: string;
  port: number;
  database: DatabaseConfig;
}

export class ConfigError extends Error {}

function parseDatabaseUrl(url: string | undefined): DatabaseConfig {
  if (url === undefined || url === '') return { client: 'sqlite', filename: defaultSqliteFile };
  if (url.startsWith('sqlite:')) {
    const filename = url.slice('sqlite:'.length);
    if (filename === '') throw new ConfigError('DATABASE_URL sqlite:PATH needs a file path');
    return { client: 'sqlite', filename: path.resolve(filename) };
  }
  if (url.startsWith('mysql://')) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ConfigError(`DATABASE_URL is not a valid URL: ${redact(url)}`);
    }
    if (parsed.pathname.length <= 1) {
      throw new ConfigError('DATABASE_URL mysql://user:pass@host:port/db needs a database name');
    }
    return { client: 'mysql', url };
  }
  throw new ConfigError(`DATABASE_URL must be unset, sqlite:PATH or mysql://..., not ${redact(url)}`);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    host: env.HOST || '127.0.0.1',
    port: parsePort(env.PORT),
    database: parseDatabaseUrl(env.DATABASE_URL),
  };
}

function parsePort(value: string | undefined): number {
  if (value === undefined || value === '') return 3000;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) {
    throw new ConfigError(`PORT must be an integer from 0 to 65535, not ${JSON.stringify(value)}`);
  }
  return port;
}

/** Hides a password in a database URL, for messages. */
export function redact(url: string): string {
  return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@');
}
