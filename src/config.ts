/**
 * Every environment variable the service reads, in one table: its name, what its values look
 * like and may be, its default and one line of what it does. The parser, `npm start -- --help`
 * and the README's configuration table are all made from it (src/config-docs.ts renders the last
 * two; a test holds the README to it). A bad value stops the process at start-up with a message
 * naming the variable.
 */
import net from 'node:net';
import path from 'node:path';
import { defaultSqliteFile } from './paths';
import { supportedVersions } from './versions/versions';

export type DatabaseConfig =
  { client: 'sqlite'; filename: string } | { client: 'mysql'; url: string };

export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];

export class ConfigError extends Error {}

/** What a value must be, said without the variable's name (the loader puts it first). */
class Refusal extends Error {}

/** How a variable's values are read: what they look like, the bounds they keep, and the parse. */
interface Kind<T> {
  /** What a value is, for --help and the README: `integer`, `seconds`, `true or false`, … */
  type: string;
  /** The values allowed, when the type does not say it all. */
  bounds?: string;
  /** A set value (or the default) as the service uses it; throws a Refusal. */
  parse: (value: string) => T;
}

/** A row of the table. */
export interface Variable<T = unknown> extends Kind<T> {
  name: string;
  /**
   * The value read when the variable is unset or empty, spelled as it would be set (`''`: the
   * variable's "unset" meaning); a function of the variables above it for a default that follows one.
   */
  default: string | ((above: Readonly<Record<string, unknown>>) => string);
  /** How --help and the README say the default, when not as it is spelled. */
  defaultText?: string;
  /** One line: what the variable does. */
  doc: string;
  /** What the README says after that line, where one line leaves something out. */
  more?: string;
}

/** Builds a row, typed by its kind. */
const variable = <T>(row: Variable<T>): Variable<T> => row;

interface NumberBounds {
  /** `seconds`, `milliseconds` or `days`; none for a plain integer. */
  unit?: 'seconds' | 'milliseconds' | 'days';
  /** Fractions allowed (seconds only). */
  fractional?: boolean;
  min: number;
  max: number;
  /** The minimum itself is refused: "more than 0". */
  aboveMin?: boolean;
  /** 0 turns the setting off, as the messages say. */
  zeroTurnsOff?: boolean;
}

function numberKind(bounds: NumberBounds): Kind<number> {
  const { unit, fractional, min, max, aboveMin, zeroTurnsOff } = bounds;
  const range =
    (aboveMin ? `more than ${min} and up to ${max}` : `from ${min} to ${max}`) +
    (zeroTurnsOff ? ' (0 turns it off)' : '');
  const noun = unit
    ? `${fractional ? 'a number' : 'a whole number'} of ${unit}`
    : fractional
      ? 'a number'
      : 'an integer';
  const pattern = fractional ? /^\d+(\.\d+)?$/ : min < 0 ? /^-?\d+$/ : /^\d+$/;
  return {
    type: unit ?? 'integer',
    bounds: range,
    parse: (value) => {
      const number = Number(value);
      if (!pattern.test(value) || number > max || (aboveMin ? number <= min : number < min))
        throw new Refusal(`must be ${noun} ${range}, not ${JSON.stringify(value)}`);
      return number;
    },
  };
}

/** Requests, connections and the like a minute or at once; 0 turns the cap off. */
const count = numberKind({ min: 0, max: 999_999_999, zeroTurnsOff: true });
/** A cap that cannot be turned off (up to the bound the document gives a problem's `limit`). */
const limit = numberKind({ min: 1, max: 1_000_000 });
const timeoutSeconds = numberKind({
  unit: 'seconds',
  fractional: true,
  min: 0,
  max: 3600,
  aboveMin: true,
});
const milliseconds = numberKind({ unit: 'milliseconds', min: 1, max: 999_999 });

const flag: Kind<boolean> = {
  type: 'true or false',
  parse: (value) => {
    if (value !== 'true' && value !== 'false')
      throw new Refusal(`must be true or false, not ${JSON.stringify(value)}`);
    return value === 'true';
  },
};

function oneOf<T extends string>(values: readonly T[]): Kind<T> {
  return {
    type: 'one of',
    bounds: values.join(', '),
    parse: (value) => {
      if (!(values as readonly string[]).includes(value))
        throw new Refusal(`must be one of ${values.join(', ')}, not ${JSON.stringify(value)}`);
      return value as T;
    },
  };
}

/** Comma-separated parts, blanks around each ignored; none when empty. */
const parts = (value: string) =>
  value.trim() === '' ? [] : value.split(',').map((part) => part.trim());

const databaseUrl: Kind<DatabaseConfig> = {
  type: 'URL',
  bounds: 'unset, sqlite:PATH or mysql://user:pass@host:port/db',
  parse: (url) => {
    if (url === '') return { client: 'sqlite', filename: defaultSqliteFile };
    if (url.startsWith('sqlite:')) {
      const filename = url.slice('sqlite:'.length);
      if (filename === '') throw new Refusal('sqlite:PATH needs a file path');
      return { client: 'sqlite', filename: path.resolve(filename) };
    }
    if (url.startsWith('mysql://')) {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw new Refusal(`is not a valid URL: ${redact(url)}`);
      }
      if (parsed.pathname.length <= 1)
        throw new Refusal('mysql://user:pass@host:port/db needs a database name');
      return { client: 'mysql', url };
    }
    throw new Refusal(`must be unset, sqlite:PATH or mysql://..., not ${redact(url)}`);
  },
};

/**
 * Deprecated API versions, each with its sunset date when one is set: `VERSION` or
 * `VERSION:SUNSET`, comma-separated. The newest cannot be deprecated.
 */
const deprecatedVersions: Kind<ReadonlyMap<string, string | undefined>> = {
  type: 'versions, comma-separated',
  bounds: 'each `YYYY-MM-DD` (a supported version but the newest) or `YYYY-MM-DD:SUNSET`',
  parse: (value) => {
    const deprecated = new Map<string, string | undefined>();
    for (const part of parts(value)) {
      const [version, sunset, ...rest] = part.split(':');
      if (!supportedVersions.slice(1).includes(version) || rest.length > 0)
        throw new Refusal(
          `takes older supported versions (${supportedVersions.slice(1).join(', ')}), each with an optional :SUNSET date, not ${JSON.stringify(part)}`,
        );
      if (
        sunset !== undefined &&
        !(/^\d{4}-\d{2}-\d{2}$/.test(sunset) && !Number.isNaN(Date.parse(sunset)))
      )
        throw new Refusal(`takes a sunset date as YYYY-MM-DD, not ${JSON.stringify(sunset)}`);
      deprecated.set(version, sunset);
    }
    return deprecated;
  },
};

const origins: Kind<string[]> = {
  type: 'origins, comma-separated',
  parse: (value) =>
    parts(value)
      .filter(Boolean)
      .map((origin) => {
        let parsed: URL | undefined;
        try {
          parsed = new URL(origin);
        } catch {
          // refused below
        }
        if (!parsed || parsed.origin !== origin)
          throw new Refusal(
            `takes origins such as https://app.example.com, not ${JSON.stringify(origin)}`,
          );
        return origin;
      }),
};

/** Names express's 'trust proxy' understands besides addresses and subnets. */
const proxyRanges = ['loopback', 'linklocal', 'uniquelocal'];

const trustedProxies: Kind<false | number | string[]> = {
  type: 'hops, or addresses and subnets, comma-separated',
  parse: (value) => {
    if (value === '') return false;
    if (/^\d{1,3}$/.test(value)) return Number(value);
    const entries = value.split(',').map((entry) => entry.trim());
    for (const entry of entries) {
      const [address, prefix, ...rest] = entry.split('/');
      const version = net.isIP(address);
      const validPrefix =
        prefix === undefined ||
        (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 6 ? 128 : 32));
      // `true` is refused on purpose: believing any X-Forwarded-For lets every client pick its own address.
      if (!(proxyRanges.includes(entry) || (version !== 0 && validPrefix && rest.length === 0)))
        throw new Refusal(
          `takes a number of proxy hops or comma-separated proxy addresses, subnets or ${proxyRanges.join(', ')}, not ${JSON.stringify(entry)}`,
        );
    }
    return entries;
  },
};

const redisUrl: Kind<string | undefined> = {
  type: 'URL',
  bounds: 'redis:// or rediss://',
  parse: (value) => {
    if (value === '') return undefined;
    if (!/^rediss?:\/\//.test(value))
      throw new Refusal(`must be redis://host:port, not ${JSON.stringify(redact(value))}`);
    return value;
  },
};

const durationUnitsMs: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** The documented retry schedule: about 28 hours in all. */
export const defaultRetrySchedule = '5s,5m,30m,2h,5h,10h,10h';

const retrySchedule: Kind<number[]> = {
  type: 'durations, comma-separated',
  bounds: 'units ms, s, m, h, d; at most 20, each up to 7 days',
  parse: (value) => {
    const waits = value.split(',').map((part) => {
      const match = /^(\d{1,9})(ms|s|m|h|d)$/.exec(part.trim());
      const ms = match ? Number(match[1]) * durationUnitsMs[match[2]] : NaN;
      if (!(ms >= 1 && ms <= 7 * 86_400_000))
        throw new Refusal(
          `takes comma-separated durations such as ${defaultRetrySchedule} (units ms, s, m, h, d; each up to 7 days), not ${JSON.stringify(part)}`,
        );
      return ms;
    });
    if (waits.length > 20) throw new Refusal(`takes at most 20 retries, not ${waits.length}`);
    return waits;
  },
};

/** Name servers, each an address with an optional port (`127.0.0.1:5353`, `[::1]:53`). */
const nameServers: Kind<string[]> = {
  type: 'name servers, comma-separated',
  bounds: 'addresses with optional ports',
  parse: (value) =>
    parts(value).map((server) => {
      const match = /^(?:\[([0-9a-f:.]+)\]|([0-9.]+))(?::(\d{1,5}))?$/i.exec(server);
      const address = match?.[1] ?? match?.[2];
      const port = match?.[3] === undefined ? 53 : Number(match[3]);
      if (!address || net.isIP(address) === 0 || port < 1 || port > 65535)
        throw new Refusal(
          `takes comma-separated name server addresses with optional ports (127.0.0.1:5353, [::1]:53), not ${JSON.stringify(server)}`,
        );
      return server;
    }),
};

/** A tenant may hold this many times what one key may, unless LONG_POLLS_PER_TENANT says otherwise. */
const longPollKeysPerTenant = 5;

/**
 * The table, in the README's order. Each key is the field of Config the variable fills; the
 * variables a default follows come before it.
 */
export const variables = {
  database: variable({
    name: 'DATABASE_URL',
    ...databaseUrl,
    default: '',
    defaultText: 'unset: `data/tasks.sqlite`',
    doc: '`sqlite:PATH` for another SQLite file, `mysql://user:pass@host:port/db` for MySQL (MariaDB 10.11 or MySQL 8)',
    more: "the database must exist (`CREATE DATABASE tasks`; a start against one that does not stops with one line saying to create it), and its tables are made on start. A new SQLite file, and a missing folder for it, are made readable by their owner only (the file holds webhook secrets). On MySQL every session sets its own `sql_mode` (`STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION`), whatever the server's default (`NO_BACKSLASH_ESCAPES` or `ANSI_QUOTES` there change nothing)",
  }),
  port: variable({
    name: 'PORT',
    ...numberKind({ min: 0, max: 65535 }),
    default: '3000',
    doc: 'port to listen on (`0`: any free port)',
  }),
  host: variable({
    name: 'HOST',
    type: 'address',
    parse: (value) => value,
    default: '127.0.0.1',
    doc: 'address to listen on',
  }),
  logLevel: variable({
    name: 'LOG_LEVEL',
    ...oneOf(logLevels),
    default: 'info',
    doc: 'how much is logged: one JSON line per request on standard output',
    more: 'each says the method, route template, operation, status, duration and request id, never a key or a body (a failed statement: its SQL with `?` for its values, and its error code); lines are written in batches of up to 4 KiB at least every 100 ms (a process killed outright loses its last 100 ms of lines)',
  }),
  apiVersionsDeprecated: variable({
    name: 'API_VERSIONS_DEPRECATED',
    ...deprecatedVersions,
    default: '',
    defaultText: 'unset: none',
    doc: 'API versions marked deprecated (`2026-11-28`, or `2026-11-28:2027-06-30` with a sunset date)',
    more: 'their answers carry `Deprecation` (RFC 9745, the day the next version was released), `Sunset` (RFC 8594) when a date is set, and a `Link` to `/versions`, which lists them as `deprecated`; they keep answering as before',
  }),
  corsOrigins: variable({
    name: 'CORS_ORIGINS',
    ...origins,
    default: '',
    defaultText: 'unset: CORS off',
    doc: 'origins (`https://app.example.com`) that browsers may call the API from',
  }),
  rateLimitPerMinute: variable({
    name: 'RATE_LIMIT_PER_MINUTE',
    ...count,
    default: '600',
    doc: 'requests per verified API key per minute (`0`: no limit)',
    more: 'reported in `RateLimit` / `RateLimit-Policy`, `429` with `Retry-After` past it',
  }),
  authFailuresPerMinute: variable({
    name: 'AUTH_FAILURES_PER_MINUTE',
    ...count,
    default: '60',
    doc: 'failed authentications (a missing, malformed, unknown, revoked or expired key) per client address per minute (`0`: no limit)',
    more: 'each is taken before its key is looked up; past it, `429` with `Retry-After` and nothing looked up. A valid key is never refused for it (see [What a client can cost the service](#what-a-client-can-cost-the-service))',
  }),
  trustProxy: variable({
    name: 'TRUST_PROXY',
    ...trustedProxies,
    default: '',
    defaultText: "unset: the socket's address",
    doc: 'the proxies whose `X-Forwarded-For` gives the client address for `AUTH_FAILURES_PER_MINUTE`',
    more: "a number of proxy hops, or addresses and subnets (`10.0.0.0/8`) and `loopback`, `linklocal`, `uniquelocal` (Express's `trust proxy`; `true` is refused, as it would let every client pick its own address)",
  }),
  redisUrl: variable({
    name: 'REDIS_URL',
    ...redisUrl,
    default: '',
    defaultText: 'unset: counts in memory',
    doc: 'a Redis (`redis://host:port`) where instances share their rate-limit counts, so several enforce one limit',
    more: 'optional at run time: while Redis is down or silent each instance counts in its own memory (logged once an outage) and shares again when it answers',
  }),
  redisTimeoutMs: variable({
    name: 'REDIS_TIMEOUT_MS',
    ...milliseconds,
    default: '10',
    doc: 'the longest a request waits for Redis',
    more: 'past it the request counts in memory, and counts stay there until Redis answers again',
  }),
  headersTimeoutSeconds: variable({
    name: 'HEADERS_TIMEOUT_SECONDS',
    ...timeoutSeconds,
    default: '10',
    doc: "time for a request's headers to arrive (from the connection or the previous request)",
    more: 'then `408` and the connection is closed. At most `REQUEST_TIMEOUT_SECONDS`',
  }),
  requestTimeoutSeconds: variable({
    name: 'REQUEST_TIMEOUT_SECONDS',
    ...timeoutSeconds,
    default: '30',
    doc: 'time for a whole request, body included, to arrive',
    more: 'then `408` and the connection is closed',
  }),
  keepAliveTimeoutSeconds: variable({
    name: 'KEEP_ALIVE_TIMEOUT_SECONDS',
    ...timeoutSeconds,
    default: '5',
    doc: 'an idle keep-alive connection is closed after this',
    more: 'it is advertised in `Keep-Alive: timeout=`, and Node closes one second later, so a client that honours it closes first',
  }),
  slowReaderTimeoutSeconds: variable({
    name: 'SLOW_READER_TIMEOUT_SECONDS',
    ...timeoutSeconds,
    default: '30',
    doc: 'once an answer is written, the time the client has to take all of it',
    more: 'then its connection is closed, so a client that stops reading pins nothing (a page is at most about 1 MiB of JSON)',
  }),
  maxConnections: variable({
    name: 'MAX_CONNECTIONS',
    ...count,
    default: '1000',
    doc: 'connections open at once (`0`: no cap)',
    more: 'at the cap, the connection idle longest (its headers not all sent, or kept alive between requests) is closed to make room, and a new one is closed only when every other has a request in progress, so half-open sockets from many addresses never keep out a request',
  }),
  maxConnectionsPerAddress: variable({
    name: 'MAX_CONNECTIONS_PER_ADDRESS',
    ...count,
    default: '100',
    doc: 'connections one client address (an IPv6 client: its /64) may hold at once (`0`: no cap)',
    more: "one more is closed as soon as it is accepted, so one address never takes what `MAX_CONNECTIONS` shares. Connections from the proxies `TRUST_PROXY` names are not counted (they carry many clients; with a hop count, every connection is taken for a proxy's); behind them each forwarded client address may have this many requests in progress, and one more is `429` with `Retry-After`",
  }),
  longPollsPerKey: variable({
    name: 'LONG_POLLS_PER_KEY',
    ...count,
    default: '10',
    doc: 'event-feed long polls (`wait`) one key may hold at once on an instance (`0`: no cap)',
    more: 'past it a poll answers at once, as `wait=0` would',
  }),
  longPollsPerTenant: variable({
    name: 'LONG_POLLS_PER_TENANT',
    ...count,
    default: (above) => String((above.longPollsPerKey as number) * longPollKeysPerTenant),
    defaultText: `${longPollKeysPerTenant} × \`LONG_POLLS_PER_KEY\``,
    doc: "the same for all of a tenant's keys together (`0`: no cap)",
  }),
  bulkChangesPerInstance: variable({
    name: 'BULK_CHANGES_PER_INSTANCE',
    ...limit,
    default: '4',
    doc: 'bulk changes (`POST /v1/tasks/bulk-update` and `bulk-delete`) one instance runs at once, over all tenants',
    more: "one more is `429` with `Retry-After`. Each holds one of the pool's 10 database connections while it runs. Whatever this says, a tenant runs at most 2 at once on all instances together (counted in the database)",
  }),
  statementTimeoutSeconds: variable({
    name: 'DATABASE_STATEMENT_TIMEOUT_SECONDS',
    ...timeoutSeconds,
    default: '5',
    doc: 'MySQL: the longest one statement may run',
    more: 'then the request answers `503` and the connection is dropped from the pool (MariaDB also stops the statement itself, `max_statement_time`). Migrations are not bounded',
  }),
  cleanupIntervalSeconds: variable({
    name: 'CLEANUP_INTERVAL_SECONDS',
    ...timeoutSeconds,
    default: '60',
    doc: 'how often the service looks for rows it no longer keeps and removes them, 500 at a time',
    more: 'those are Idempotency-Keys older than 24 hours, and events and webhook delivery attempts older than `EVENT_RETENTION_DAYS`',
  }),
  eventRetentionDays: variable({
    name: 'EVENT_RETENTION_DAYS',
    ...numberKind({ unit: 'days', min: 1, max: 99_999 }),
    default: '30',
    doc: 'events older than this are removed from the feed, and webhook delivery attempts from the logs',
    more: 'a cursor before the oldest kept event is `410`',
  }),
  webhookTimeoutSeconds: variable({
    name: 'WEBHOOK_TIMEOUT_SECONDS',
    ...timeoutSeconds,
    default: '10',
    doc: 'the longest a webhook delivery attempt may take, connecting included; then it fails with `timeout`',
  }),
  webhookRetryScheduleMs: variable({
    name: 'WEBHOOK_RETRY_SCHEDULE',
    ...retrySchedule,
    default: defaultRetrySchedule,
    doc: 'the waits before each retry of a failed delivery',
    more: "each moved by up to 20% either way, never shorter than the receiver's `Retry-After` (honoured up to 7 days)",
  }),
  webhookEndpointsPerTenant: variable({
    name: 'WEBHOOK_ENDPOINTS_PER_TENANT',
    ...limit,
    default: '20',
    doc: 'the most webhook endpoints, enabled or not, one tenant may have',
    more: 'one more is `422` `/problems/limit-reached`',
  }),
  webhookMaxInFlight: variable({
    name: 'WEBHOOK_MAX_IN_FLIGHT',
    ...limit,
    // An attempt holds its event's JSON until its request is made, then undici's copy (outside the
    // heap) until it ends, and no more bodies are read ahead than there are slots: the largest
    // events' attempts stay well within the thread's heap (BENCHMARKS.md).
    default: '64',
    doc: 'webhook delivery attempts in flight at once on one instance, over all endpoints (each endpoint still at most 10)',
    more: "tenants take turns for them, and one tenant holds no more than its share while others have deliveries waiting, nor more than its receivers' answers have earned (two, one more per attempt ended before the timeout, half as many per attempt cut off by it). An attempt takes its place once its host's address is known (a lookup holds none) and holds it until its connection has ended. The default keeps the largest events' bodies within the 128 MB heap `npm start` gives",
  }),
  webhookThreadNice: variable({
    name: 'WEBHOOK_THREAD_NICE',
    ...numberKind({ min: -20, max: 19 }),
    default: '-20',
    doc: "the Linux nice value of the webhook delivery thread (the requests' thread keeps the service's)",
    more: "a value below the service's own needs `CAP_SYS_NICE` or a high enough `RLIMIT_NICE`; without them the thread keeps the service's value and says so at `info`. At -20 deliveries take the CPU they need ahead of requests (one core at the most): on a busy machine, writers flat out to many endpoints slow down rather than leave their webhooks behind",
  }),
  webhookDnsServers: variable({
    name: 'WEBHOOK_DNS_SERVERS',
    ...nameServers,
    default: '',
    defaultText: "the system's",
    doc: 'the name servers (`10.0.0.2`, `127.0.0.1:5353`, `[::1]:53`) webhook host names are looked up on',
  }),
  webhookDnsTimeoutMs: variable({
    name: 'WEBHOOK_DNS_TIMEOUT_MS',
    ...milliseconds,
    default: '2000',
    doc: 'how long one webhook host name lookup may take',
    more: 'at registration (a `400` past it) and before a delivery (a failed attempt past it)',
  }),
  webhookAllowPrivateTargets: variable({
    name: 'WEBHOOK_ALLOW_PRIVATE_TARGETS',
    ...flag,
    default: 'false',
    doc: '`true` (development and tests only) lets webhook endpoints use `http` and internal addresses',
    more: 'that is, loopback, private, link-local and other internal addresses, at registration and on delivery; the service then logs a warning at start',
  }),
  shutdownGraceSeconds: variable({
    name: 'SHUTDOWN_GRACE_SECONDS',
    ...numberKind({ unit: 'seconds', fractional: true, min: 0, max: 3600 }),
    default: '10',
    doc: 'on SIGTERM, how long requests in flight may finish',
    more: 'the service stops taking connections at once, then closes the pool and exits 0',
  }),
};

/** The configuration: one field for each row of the table, typed by its parse. */
export type Config = Fields<{
  [K in keyof typeof variables]: ReturnType<(typeof variables)[K]['parse']>;
}>;
/** A field that may be undefined is optional. */
type Fields<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: T[K];
};

/** What no row can say alone: a message when the variables together are refused. */
const together: Array<(config: Config) => string | undefined> = [
  // Node refuses a server whose headers may take longer than the whole request.
  ({ headersTimeoutSeconds: headers, requestTimeoutSeconds: request }) =>
    headers > request
      ? `HEADERS_TIMEOUT_SECONDS (${headers}) must not exceed REQUEST_TIMEOUT_SECONDS (${request})`
      : undefined,
];

/** One variable's value from `env`, or its default; a bad one is a ConfigError naming it. */
function read<T>(
  row: Variable<T>,
  env: NodeJS.ProcessEnv,
  above: Readonly<Record<string, unknown>>,
): T {
  const set = env[row.name];
  const value =
    set !== undefined && set !== ''
      ? set
      : typeof row.default === 'function'
        ? row.default(above)
        : row.default;
  try {
    return row.parse(value);
  } catch (error) {
    if (error instanceof Refusal) throw new ConfigError(`${row.name} ${error.message}`);
    throw error;
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const config: Record<string, unknown> = {};
  for (const [field, row] of Object.entries(variables) as Array<[string, Variable]>)
    config[field] = read(row, env, config);
  for (const check of together) {
    const refusal = check(config as Config);
    if (refusal !== undefined) throw new ConfigError(refusal);
  }
  return config as Config;
}

/** Read once for the whole process rather than by loadConfig (see libraryShims below). */
export const processVariables = {
  libraryShims: variable({
    name: 'LIBRARY_SHIMS',
    type: 'on or off',
    parse: (value) => {
      if (value === 'on') return true;
      if (value === 'off') return false;
      throw new Refusal(`must be on or off, not ${JSON.stringify(value)}`);
    },
    default: 'on',
    doc: "`off` takes the libraries' own paths where the service otherwise reaches into their internals for speed",
    more: "each transaction through `knex.transaction()`, a round trip per statement (none held back to go with the next); openapi-backend's own router; node's own request and response objects for Express. Answers are the same, at more round trips and CPU a request. For an upgrade of knex, mysql2, openapi-backend or Express that breaks a shim: [src/db/driver/README.md](src/db/driver/README.md) and [src/http/shims/README.md](src/http/shims/README.md) list every internal touched and the test that fails",
  }),
};

/** Read by the tests, not by the service; documented beside the others. */
export const testVariables = {
  testMysqlUrl: variable({
    name: 'TEST_MYSQL_URL',
    type: 'URL',
    parse: (value) => value,
    default: 'mysql://root@127.0.0.1:3306/',
    doc: 'tests only: the MySQL server to create test databases on',
  }),
  testRedisUrl: variable({
    name: 'TEST_REDIS_URL',
    type: 'URL',
    parse: (value) => value,
    default: 'redis://127.0.0.1:6379',
    doc: 'tests only: the Redis that two test instances share',
  }),
};

/**
 * LIBRARY_SHIMS: `on` (the default) or `off`. Off, the service keeps to its libraries' own paths
 * where it otherwise reaches into their internals (src/db/driver and src/http/shims). Read once
 * for the whole process, not by loadConfig: it picks code paths that every entry point shares
 * (the service, the CLIs, the tests' own connections).
 */
export const libraryShims: boolean = parseLibraryShims(process.env.LIBRARY_SHIMS);

export function parseLibraryShims(value: string | undefined): boolean {
  return read(processVariables.libraryShims, { LIBRARY_SHIMS: value }, {});
}

/** Hides a password in a database URL, for messages. */
export function redact(url: string): string {
  return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@');
}
