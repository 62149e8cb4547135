/**
 * Every environment variable the service reads, read once, typed, with defaults. A bad value
 * stops the process at start-up with a message naming the variable.
 */
import net from 'node:net';
import path from 'node:path';
import { defaultSqliteFile } from './paths';

export type DatabaseConfig =
  { client: 'sqlite'; filename: string } | { client: 'mysql'; url: string };

export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];

export interface Config {
  host: string;
  port: number;
  database: DatabaseConfig;
  logLevel: LogLevel;
  /** Origins a browser may call the API from; none (CORS off) by default. */
  corsOrigins: string[];
  /** How long requests in flight may run on after SIGTERM before their connections are cut. */
  shutdownGraceSeconds: number;
  /** Requests per API key per minute; 0 turns limiting off. */
  rateLimitPerMinute: number;
  /** Failed authentications per client address per minute; 0 turns the budget off. */
  authFailuresPerMinute: number;
  /**
   * Express's 'trust proxy': false (the socket's address is the client's), a number of proxy
   * hops, or the proxies' addresses and subnets whose X-Forwarded-For is believed.
   */
  trustProxy: false | number | string[];
  /** Where several instances share their rate-limit counts; in memory when unset. */
  redisUrl?: string;
  /** How often expired rows (Idempotency-Keys older than 24 hours, old events) are looked for and removed. */
  cleanupIntervalSeconds: number;
  /** Events older than this are removed. */
  eventRetentionDays: number;
  /** The longest a request waits for Redis; past it, the request counts in this instance's memory. */
  redisTimeoutMs: number;
  /** Time for a request's headers to arrive. */
  headersTimeoutSeconds: number;
  /** Time for a whole request (headers and body) to arrive. */
  requestTimeoutSeconds: number;
  /** How long an idle keep-alive connection is kept between requests. */
  keepAliveTimeoutSeconds: number;
  /** Connections open at once; past it the one idle longest (no request in progress) is closed, or the new one when none is. 0: no cap. */
  maxConnections: number;
  /**
   * Connections one client address may hold at once (0: no cap): counted by the socket's address,
   * except for sockets from the proxies TRUST_PROXY names, whose forwarded clients each get this
   * many requests in progress instead.
   */
  maxConnectionsPerAddress: number;
  /** Long polls of the event feed one key may hold at once (0: no cap); past it a poll answers at once. */
  longPollsPerKey: number;
  /** Long polls one tenant's keys may hold at once, together (0: no cap). */
  longPollsPerTenant: number;
  /** How long a client has to take a whole answer once it is written, before its connection is closed. */
  slowReaderTimeoutSeconds: number;
  /** The longest one database statement may run before its request answers 503 (MySQL only). */
  statementTimeoutSeconds: number;
  /** The longest a webhook delivery attempt may take, connection included. */
  webhookTimeoutSeconds: number;
  /** The waits before each retry of a failed delivery, in milliseconds: its length is the number of retries. */
  webhookRetryScheduleMs: number[];
  /** Development and tests: webhook targets may be http and on loopback, private and other internal addresses. */
  webhookAllowPrivateTargets: boolean;
  /** The most webhook endpoints, enabled or not, one tenant may have. */
  webhookEndpointsPerTenant: number;
  /** Webhook delivery attempts in flight at once on this instance, over every endpoint and tenant. */
  webhookMaxInFlight: number;
  /** The name servers (`host:port`) webhook host names are looked up on; the system's when empty. */
  webhookDnsServers: string[];
  /** How long a webhook host name's lookup may take, at registration and before a delivery. */
  webhookDnsTimeoutMs: number;
}

export class ConfigError extends Error {}

/**
 * LIBRARY_SHIMS: `on` (the default) or `off`. Off, the service keeps to its libraries' own paths
 * where it otherwise reaches into their internals for speed (src/db/driver and src/http/shims,
 * whose READMEs name each internal): a transaction sends each statement in a round trip of its
 * own through knex, openapi-backend routes with its own router, and Express and mysql2 make
 * requests and statements their own way. What the service answers is the same either way; off
 * is for an upgrade of those libraries that breaks a shim. Read once for the whole process, not
 * by loadConfig: it picks code paths that every entry point shares (the service, the CLIs, the
 * tests' own connections).
 */
export const libraryShims: boolean = parseLibraryShims(process.env.LIBRARY_SHIMS);

export function parseLibraryShims(value: string | undefined): boolean {
  if (value === undefined || value === '' || value === 'on') return true;
  if (value === 'off') return false;
  throw new ConfigError(`LIBRARY_SHIMS must be on or off, not ${JSON.stringify(value)}`);
}

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
  throw new ConfigError(
    `DATABASE_URL must be unset, sqlite:PATH or mysql://..., not ${redact(url)}`,
  );
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    host: env.HOST || '127.0.0.1',
    port: parsePort(env.PORT),
    database: parseDatabaseUrl(env.DATABASE_URL),
    logLevel: parseLogLevel(env.LOG_LEVEL),
    corsOrigins: parseOrigins(env.CORS_ORIGINS),
    shutdownGraceSeconds: parseSeconds('SHUTDOWN_GRACE_SECONDS', env.SHUTDOWN_GRACE_SECONDS, 10),
    rateLimitPerMinute: parseCount('RATE_LIMIT_PER_MINUTE', env.RATE_LIMIT_PER_MINUTE, 600),
    authFailuresPerMinute: parseCount('AUTH_FAILURES_PER_MINUTE', env.AUTH_FAILURES_PER_MINUTE, 60),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    redisUrl: parseRedisUrl(env.REDIS_URL),
    cleanupIntervalSeconds: parsePositiveSeconds(
      'CLEANUP_INTERVAL_SECONDS',
      env.CLEANUP_INTERVAL_SECONDS,
      60,
    ),
    eventRetentionDays: parseDays('EVENT_RETENTION_DAYS', env.EVENT_RETENTION_DAYS, 30),
    redisTimeoutMs: parseMilliseconds('REDIS_TIMEOUT_MS', env.REDIS_TIMEOUT_MS, 10),
    ...parseHttpTimeouts(env),
    maxConnections: parseCount('MAX_CONNECTIONS', env.MAX_CONNECTIONS, 1000),
    maxConnectionsPerAddress: parseCount(
      'MAX_CONNECTIONS_PER_ADDRESS',
      env.MAX_CONNECTIONS_PER_ADDRESS,
      100,
    ),
    ...parseLongPolls(env),
    slowReaderTimeoutSeconds: parseTimeout(
      'SLOW_READER_TIMEOUT_SECONDS',
      env.SLOW_READER_TIMEOUT_SECONDS,
      30,
    ),
    statementTimeoutSeconds: parseTimeout(
      'DATABASE_STATEMENT_TIMEOUT_SECONDS',
      env.DATABASE_STATEMENT_TIMEOUT_SECONDS,
      5,
    ),
    webhookTimeoutSeconds: parseTimeout('WEBHOOK_TIMEOUT_SECONDS', env.WEBHOOK_TIMEOUT_SECONDS, 10),
    webhookRetryScheduleMs: parseRetrySchedule(env.WEBHOOK_RETRY_SCHEDULE),
    webhookAllowPrivateTargets: parseBoolean(
      'WEBHOOK_ALLOW_PRIVATE_TARGETS',
      env.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      false,
    ),
    webhookEndpointsPerTenant: parseLimit(
      'WEBHOOK_ENDPOINTS_PER_TENANT',
      env.WEBHOOK_ENDPOINTS_PER_TENANT,
      20,
    ),
    webhookMaxInFlight: parseLimit(
      'WEBHOOK_MAX_IN_FLIGHT',
      env.WEBHOOK_MAX_IN_FLIGHT,
      defaultWebhookMaxInFlight,
    ),
    webhookDnsServers: parseDnsServers(env.WEBHOOK_DNS_SERVERS),
    webhookDnsTimeoutMs: parseMilliseconds(
      'WEBHOOK_DNS_TIMEOUT_MS',
      env.WEBHOOK_DNS_TIMEOUT_MS,
      2000,
    ),
  };
}

/** Comma-separated name servers, each an address with an optional port (`127.0.0.1:5353`, `[::1]:53`). */
function parseDnsServers(value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') return [];
  return value.split(',').map((part) => {
    const server = part.trim();
    const match = /^(?:\[([0-9a-f:.]+)\]|([0-9.]+))(?::(\d{1,5}))?$/i.exec(server);
    const address = match?.[1] ?? match?.[2];
    const port = match?.[3] === undefined ? 53 : Number(match[3]);
    if (!address || net.isIP(address) === 0 || port < 1 || port > 65535)
      throw new ConfigError(
        `WEBHOOK_DNS_SERVERS takes comma-separated name server addresses with optional ports (127.0.0.1:5353, [::1]:53), not ${JSON.stringify(server)}`,
      );
    return server;
  });
}

/**
 * An attempt in flight holds its event three or four times over (the row's text, the parsed
 * Event, the signed body, undici's copy), and the largest event allowed is a task.updated with
 * the longest description before and after, every character escaped. The default keeps the
 * attempts in flight within about half of the old space `npm start` gives the process, beside its
 * own live data and the requests it serves (BENCHMARKS.md).
 */
const defaultWebhookMaxInFlight = 64;

/** The documented retry schedule: about 28 hours in all. */
export const defaultRetrySchedule = '5s,5m,30m,2h,5h,10h,10h';

const durationUnitsMs: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** Comma-separated durations (`5s,5m,30m`; units ms, s, m, h, d), each up to 7 days, at most 20. */
function parseRetrySchedule(value: string | undefined): number[] {
  const spelled = value === undefined || value === '' ? defaultRetrySchedule : value;
  const waits = spelled.split(',').map((part) => {
    const match = /^(\d{1,9})(ms|s|m|h|d)$/.exec(part.trim());
    const ms = match ? Number(match[1]) * durationUnitsMs[match[2]] : NaN;
    if (!(ms >= 1 && ms <= 7 * 86_400_000)) {
      throw new ConfigError(
        `WEBHOOK_RETRY_SCHEDULE takes comma-separated durations such as ${defaultRetrySchedule} (units ms, s, m, h, d; each up to 7 days), not ${JSON.stringify(part)}`,
      );
    }
    return ms;
  });
  if (waits.length > 20)
    throw new ConfigError(`WEBHOOK_RETRY_SCHEDULE takes at most 20 retries, not ${waits.length}`);
  return waits;
}

function parseBoolean(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (value !== 'true' && value !== 'false')
    throw new ConfigError(`${name} must be true or false, not ${JSON.stringify(value)}`);
  return value === 'true';
}

function parseHttpTimeouts(env: NodeJS.ProcessEnv) {
  const headersTimeoutSeconds = parseTimeout(
    'HEADERS_TIMEOUT_SECONDS',
    env.HEADERS_TIMEOUT_SECONDS,
    10,
  );
  const requestTimeoutSeconds = parseTimeout(
    'REQUEST_TIMEOUT_SECONDS',
    env.REQUEST_TIMEOUT_SECONDS,
    30,
  );
  const keepAliveTimeoutSeconds = parseTimeout(
    'KEEP_ALIVE_TIMEOUT_SECONDS',
    env.KEEP_ALIVE_TIMEOUT_SECONDS,
    5,
  );
  // Node refuses a server whose headers may take longer than the whole request.
  if (headersTimeoutSeconds > requestTimeoutSeconds) {
    throw new ConfigError(
      `HEADERS_TIMEOUT_SECONDS (${headersTimeoutSeconds}) must not exceed REQUEST_TIMEOUT_SECONDS (${requestTimeoutSeconds})`,
    );
  }
  return { headersTimeoutSeconds, requestTimeoutSeconds, keepAliveTimeoutSeconds };
}

/** A tenant may hold this many times what one key may, unless LONG_POLLS_PER_TENANT says otherwise. */
const longPollKeysPerTenant = 5;

function parseLongPolls(env: NodeJS.ProcessEnv) {
  const longPollsPerKey = parseCount('LONG_POLLS_PER_KEY', env.LONG_POLLS_PER_KEY, 10);
  const longPollsPerTenant = parseCount(
    'LONG_POLLS_PER_TENANT',
    env.LONG_POLLS_PER_TENANT,
    longPollsPerKey * longPollKeysPerTenant,
  );
  return { longPollsPerKey, longPollsPerTenant };
}

/** Names express's 'trust proxy' understands besides addresses and subnets. */
const proxyRanges = ['loopback', 'linklocal', 'uniquelocal'];

function parseTrustProxy(value: string | undefined): Config['trustProxy'] {
  if (value === undefined || value === '') return false;
  if (/^\d{1,3}$/.test(value)) return Number(value);
  const entries = value.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address, prefix, ...rest] = entry.split('/');
    const version = net.isIP(address);
    const validPrefix =
      prefix === undefined ||
      (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 6 ? 128 : 32));
    if (!(proxyRanges.includes(entry) || (version !== 0 && validPrefix && rest.length === 0))) {
      // `true` is refused on purpose: believing any X-Forwarded-For lets every client pick its own address.
      throw new ConfigError(
        `TRUST_PROXY takes a number of proxy hops or comma-separated proxy addresses, subnets or ${proxyRanges.join(', ')}, not ${JSON.stringify(entry)}`,
      );
    }
  }
  return entries;
}

function parseMilliseconds(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  if (!/^\d{1,6}$/.test(value) || Number(value) === 0)
    throw new ConfigError(
      `${name} must be a whole number of milliseconds from 1, not ${JSON.stringify(value)}`,
    );
  return Number(value);
}

function parseTimeout(name: string, value: string | undefined, fallback: number): number {
  const seconds = parseSeconds(name, value, fallback);
  if (seconds === 0) throw new ConfigError(`${name} must be more than 0 seconds`);
  return seconds;
}

function parseCount(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  if (!/^\d{1,9}$/.test(value))
    throw new ConfigError(
      `${name} must be a whole number (0 turns it off), not ${JSON.stringify(value)}`,
    );
  return Number(value);
}

/** A limit that cannot be turned off (up to the bound the document gives a problem's `limit`). */
function parseLimit(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  if (!/^[1-9]\d{0,6}$/.test(value) || Number(value) > 1_000_000)
    throw new ConfigError(
      `${name} must be a whole number from 1 to 1000000, not ${JSON.stringify(value)}`,
    );
  return Number(value);
}

function parseRedisUrl(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^rediss?:\/\//.test(value))
    throw new ConfigError(
      `REDIS_URL must be redis://host:port, not ${JSON.stringify(redact(value))}`,
    );
  return value;
}

function parseSeconds(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const seconds = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || seconds > 3600)
    throw new ConfigError(
      `${name} must be a number of seconds up to 3600, not ${JSON.stringify(value)}`,
    );
  return seconds;
}

function parsePositiveSeconds(name: string, value: string | undefined, fallback: number): number {
  const seconds = parseSeconds(name, value, fallback);
  if (seconds === 0) throw new ConfigError(`${name} must be more than 0 seconds`);
  return seconds;
}

function parseDays(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  if (!/^[1-9]\d{0,4}$/.test(value))
    throw new ConfigError(
      `${name} must be a whole number of days from 1, not ${JSON.stringify(value)}`,
    );
  return Number(value);
}

function parseLogLevel(value: string | undefined): LogLevel {
  if (value === undefined || value === '') return 'info';
  if (!(logLevels as readonly string[]).includes(value))
    throw new ConfigError(
      `LOG_LEVEL must be one of ${logLevels.join(', ')}, not ${JSON.stringify(value)}`,
    );
  return value as LogLevel;
}

function parseOrigins(value: string | undefined): string[] {
  const origins = (value ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      // reported below
    }
    if (!parsed || parsed.origin !== origin)
      throw new ConfigError(
        `CORS_ORIGINS takes origins such as https://app.example.com, not ${JSON.stringify(origin)}`,
      );
  }
  return origins;
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
