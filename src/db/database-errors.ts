/**
 * Database errors, per dialect, mapped to the typed errors of `src/errors.ts` at the repository
 * boundary, so nothing above this layer knows a driver's error codes.
 */
import { DatabaseUnavailableError } from '../errors';

/** The database cannot be reached, dropped the connection, or did not answer in time. */
const unavailableCodes = new Set([
  // mysql2 and the network
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_LOCK_WAIT_TIMEOUT',
  // A statement stopped by the server (KILL QUERY, shutdown): whether it took effect is unknown.
  'ER_QUERY_INTERRUPTED',
  // Galera: a node outside the primary component, or one still joining, refuses every statement
  // that touches a table ("WSREP has not yet prepared node for application use", 1047) until it
  // rejoins; a commit the cluster could not replicate (it lost the primary component meanwhile)
  // fails with 1180. Both are an outage of that node, not a fault of the request.
  'ER_UNKNOWN_COM_ERROR',
  'ER_ERROR_DURING_COMMIT',
  // MySQL Group Replication (documented, not tried here): a member that is not ONLINE refuses
  // commits (3100), and a secondary of a single-primary group is super_read_only (1290), as is a
  // former primary after a failover.
  'ER_RUN_HOOK_ERROR',
  'ER_OPTION_PREVENTS_STATEMENT',
  // better-sqlite3
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_CANTOPEN',
  'SQLITE_FULL',
  'SQLITE_IOERR',
]);

/**
 * The database gave up a transaction for a conflict with another: a deadlock, or on Galera a write
 * set that failed certification (reported as a deadlock, 1213, SQLSTATE 40001). Nothing of it
 * was applied, so it can run again.
 */
const writeConflictCodes = new Set([
  'ER_LOCK_DEADLOCK',
  // MySQL Group Replication in multi-primary mode: a transaction that failed certification
  // (documented, not tried here).
  'ER_TRANSACTION_ROLLBACK_DURING_COMMIT',
]);
/** TiDB's write conflict (9007; documented, not tried here), which mysql2 has no code for. */
const writeConflictErrnos = new Set([9007]);

/**
 * A conditional write found its row changed since it was read (the version moved on): the
 * transaction is to be run again from its reads.
 */
export class WriteConflictError extends Error {
  constructor() {
    super('The row changed between its read and its write.');
  }
}
/**
 * Errors mysql2 has no code for: MariaDB's ER_STATEMENT_TIMEOUT (max_statement_time passed) and
 * ER_CONNECTION_KILLED (the server ended the connection, as a node going down does).
 */
const unavailableErrnos = new Set([1969, 1927]);

const foreignKeyCodes = new Set([
  'ER_NO_REFERENCED_ROW_2',
  'ER_NO_REFERENCED_ROW',
  'SQLITE_CONSTRAINT_FOREIGNKEY',
]);
const duplicateKeyCodes = new Set([
  'ER_DUP_ENTRY',
  'SQLITE_CONSTRAINT_PRIMARYKEY',
  'SQLITE_CONSTRAINT_UNIQUE',
]);
const nullViolationCodes = new Set(['ER_BAD_NULL_ERROR', 'SQLITE_CONSTRAINT_NOTNULL']);

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function isUnavailable(error: unknown): boolean {
  const code = codeOf(error);
  if (code !== undefined && (unavailableCodes.has(code) || code.startsWith('SQLITE_IOERR')))
    return true;
  if (unavailableErrnos.has((error as { errno?: unknown } | null)?.errno as number)) return true;
  // mysql2 marks every error that ends its connection fatal (some carry no code, such as a query
  // on a connection the server dropped); knex's pool gives up waiting with a KnexTimeoutError.
  return (
    (error as { fatal?: unknown } | null)?.fatal === true ||
    (error as Error | null)?.name === 'KnexTimeoutError'
  );
}

/**
 * The connection ended under the statement (the server closed it, as a node leaving a cluster's
 * rotation does): a read may go again at once, on another connection. Not a statement that ran out
 * of time, which would only wait as long again.
 */
export function isConnectionLost(error: unknown): boolean {
  const code = codeOf(error);
  return (
    code === 'PROTOCOL_CONNECTION_LOST' ||
    code === 'ECONNRESET' ||
    code === 'EPIPE' ||
    (error as { errno?: unknown } | null)?.errno === 1927
  );
}

/**
 * A read whose connection was lost goes once more, on another connection: a connection closed
 * while idle in the pool (a node taken out of rotation) fails the next statement sent on it.
 */
export async function readingAgainIfLost<T>(read: () => PromiseLike<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (!isConnectionLost(error)) throw error;
    return read();
  }
}

export function isWriteConflict(error: unknown): boolean {
  if (error instanceof WriteConflictError) return true;
  const code = codeOf(error);
  return (
    (code !== undefined && writeConflictCodes.has(code)) ||
    writeConflictErrnos.has((error as { errno?: unknown } | null)?.errno as number)
  );
}

export function isForeignKeyViolation(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && foreignKeyCodes.has(code);
}

/** A NULL given to a NOT NULL column. */
export function isNullViolation(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && nullViolationCodes.has(code);
}

export function isDuplicateKey(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && duplicateKeyCodes.has(code);
}

/** Returns the repository with every method's database failures translated. */
export function translatingErrors<R extends object>(repository: R): R {
  const wrapped = {} as Record<string, unknown>;
  for (const [name, method] of Object.entries(repository)) {
    wrapped[name] =
      typeof method === 'function'
        ? async (...args: unknown[]) => {
            try {
              return await method.apply(repository, args);
            } catch (error) {
              throw isUnavailable(error) ? new DatabaseUnavailableError(error) : error;
            }
          }
        : method;
  }
  return wrapped as R;
}
