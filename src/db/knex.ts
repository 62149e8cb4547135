import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { libraryShims, type DatabaseConfig } from '../config';
import type { GaleraAware } from './driver/pipelined-connection';
import { queriesAsText } from './driver/query-text';
import { boundStatements } from './driver/statement-timeout';

/** How long a request waits for a database connection before it answers 503. */
const acquireTimeoutMs = 5000;

/** The most connections the service's pool for requests opens to MySQL. */
export const poolSize = 10;

/**
 * The background jobs' pools, on MySQL: numbering (with the feed watcher's reads), which the
 * feed's lag waits on; the webhook work (planning, the delivery worker), in its thread; clean-up
 * and the counts a scrape reads, whose transactions can queue behind each other.
 */
export const backgroundPoolSizes = { numbering: 2, webhooks: 3, cleanup: 1 } as const;

const migrationsDirectory = path.join(__dirname, 'migrations');
// .ts under ts-jest, .js once built: the migrations are loaded as this module was.
const migrationExtension = path.extname(__filename);

/**
 * The files of migrations/, named without their extension, so a database migrated from the
 * compiled files and one migrated from the sources (the tests) record the same names.
 */
const migrationSource: Knex.MigrationSource<string> = {
  async getMigrations() {
    const files = await fs.promises.readdir(migrationsDirectory);
    return files
      .filter((file) => file.endsWith(migrationExtension))
      .map((file) => file.slice(0, -migrationExtension.length))
      .sort();
  },
  getMigrationName: (name) => name,
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a migration is a module named at run time
  getMigration: async (name) => require(path.join(migrationsDirectory, name + migrationExtension)),
};

/**
 * `statementTimeoutMs`: the longest one MySQL statement may run; unbounded (as migrations need)
 * when absent. `maxConnections`: the pool's bound on MySQL (SQLite's pool is one connection).
 */
export function knexConfig(
  database: DatabaseConfig,
  log?: Knex.Logger,
  statementTimeoutMs?: number,
  maxConnections = poolSize,
): Knex.Config {
  const migrations: Knex.MigratorConfig = { migrationSource };
  // A failed statement's error names its SQL with placeholders, not with the values written in:
  // errors reach the log (error-for-log.ts).
  const compileSqlOnError = false;
  if (database.client === 'sqlite') {
    return {
      client: 'better-sqlite3',
      connection: { filename: database.filename },
      useNullAsDefault: true,
      compileSqlOnError,
      migrations,
      log,
      acquireConnectionTimeout: acquireTimeoutMs,
      pool: {
        afterCreate(
          connection: { pragma(sql: string): unknown },
          done: (err: Error | null, c: unknown) => void,
        ) {
          connection.pragma('journal_mode = WAL');
          // WAL's default (NORMAL) can lose acknowledged commits on power loss; FULL cannot.
          connection.pragma('synchronous = FULL');
          connection.pragma('foreign_keys = ON');
          connection.pragma('busy_timeout = 5000');
          done(null, connection);
        },
      },
    };
  }
  const url = new URL(database.url);
  return {
    client: 'mysql2',
    connection: {
      host: url.hostname,
      port: url.port ? Number(url.port) : 3306,
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      database: decodeURIComponent(url.pathname.slice(1)),
      // No charset here: mysql2's default is utf8mb4 already, and naming one would make knex
      // stamp it (with its default, case-insensitive collation) on every table it creates,
      // overriding the utf8mb4_bin default the first migration sets.
      timezone: 'Z',
      // DATETIME(3) comes back as 'YYYY-MM-DD hh:mm:ss.sss', the shape SQLite stores too.
      dateStrings: true,
      connectTimeout: acquireTimeoutMs,
      // A transaction sends the statements it does not wait on with the next one, as one packet
      // (driver/pipelined-connection.ts). Every statement is built with bound values, never spliced text.
      multipleStatements: true,
    },
    compileSqlOnError,
    migrations,
    log,
    acquireConnectionTimeout: acquireTimeoutMs,
    pool: {
      min: 0,
      max: maxConnections,
      afterCreate(
        connection: Parameters<typeof boundStatements>[0],
        done: (err: unknown, c: unknown) => void,
      ) {
        if (statementTimeoutMs === undefined)
          return setUpSession(connection, pinnedSession, done, everyStatementCausal);
        if (libraryShims) queriesAsText(connection);
        // Not one of the switch's shims: the bound is behaviour (a 503 instead of a hang), not speed.
        boundStatements(connection, statementTimeoutMs);
        // A request waits up to 3 s (less than a statement may run) for a row another transaction holds (a retry with the same
        // Idempotency-Key waits for the first to commit) before it gives up: 409, or 503.
        // MariaDB stops the statement itself too (`/*M! */` runs on MariaDB only; MySQL has no such bound on writes).
        const seconds = statementTimeoutMs / 1000;
        setUpSession(
          connection,
          `${pinnedSession} /*M!, SESSION max_statement_time = ${seconds} */`,
          done,
          readsCausal,
        );
      },
    },
  };
}

/**
 * What every session relies on, set before its first statement, in full: another sql_mode
 * (NO_BACKSLASH_ESCAPES above all) would change what mysql2's escaped values mean. Every flag
 * exists on MariaDB and MySQL 5.7 to 8.4; strict mode refuses a value too long for its column.
 */
const pinnedSession =
  "SET SESSION sql_mode = 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION', time_zone = '+00:00', innodb_lock_wait_timeout = 3";

/** The callback form of a mysql2 connection's query, as the pool's afterCreate gets it. */
type CallbackQuery = (sql: string, callback: (err: unknown, rows?: unknown) => void) => void;

/** `wsrep_sync_wait` values: reads wait for causality; or every statement does, writes included. */
const readsCausal = 1;
/**
 * For the pool that migrates (the one without a statement bound): a start claims the migrations
 * with an UPDATE (migrate.ts), which with only reads causal could act on a node that has not yet
 * applied another start's claim, and lose only at commit.
 */
const everyStatementCausal = 15;

/**
 * Sets the session up with `settings`; on a Galera node (`wsrep_on` is ON) it also sets
 * `wsrep_sync_wait`, so that a read through this node sees every write the cluster committed
 * before it (a task created through one instance is there for an immediate GET through another).
 */
function setUpSession(
  connection: { query(...args: unknown[]): unknown },
  settings: string,
  done: (err: unknown, c: unknown) => void,
  syncWait: number,
): void {
  const query = connection.query.bind(connection) as CallbackQuery;
  query(settings, (err) => {
    if (err) return done(err, connection);
    query("SHOW VARIABLES LIKE 'wsrep_on'", (err, rows) => {
      if (err) return done(err, connection);
      if ((rows as Array<{ Value?: string }>)[0]?.Value !== 'ON') return done(null, connection);
      (connection as GaleraAware).oneStatementAPacket = true;
      query(`SET SESSION wsrep_sync_wait = ${syncWait}`, (err) => done(err, connection));
    });
  });
}

/** `log` takes knex's own warnings (a lost connection, a failed acquire); the console otherwise. */
export function createKnex(
  database: DatabaseConfig,
  log?: Knex.Logger,
  statementTimeoutMs?: number,
  maxConnections?: number,
): Knex {
  if (database.client === 'sqlite') createOwnersOnly(database.filename);
  return knexFactory(knexConfig(database, log, statementTimeoutMs, maxConnections));
}

/**
 * The SQLite file holds webhook secrets: made readable and writable by its owner only, in a
 * folder only its owner may enter, before SQLite opens it. SQLite gives the -wal and -shm files
 * it makes beside it the database file's mode. A file or folder that exists keeps its mode: its
 * operator chose it.
 */
function createOwnersOnly(filename: string): void {
  fs.mkdirSync(path.dirname(filename), { recursive: true, mode: 0o700 });
  fs.closeSync(fs.openSync(filename, 'a', 0o600));
}
