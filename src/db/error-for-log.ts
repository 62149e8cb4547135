/**
 * What the log may show of an error: what went wrong and in which statement, never the values
 * the statement carried (a webhook secret, an Idempotency-Key, a task's text). knex writes the
 * statement's shape into its errors' message (knexConfig's `compileSqlOnError: false`); mysql2
 * adds the statement as sent, values and all, in `sql`, and the server's own text in `sqlMessage`
 * quotes values too ("Duplicate entry '…' for key", "near '…'").
 */

/** The fields that say what went wrong and where; any other field may hold what was sent. */
const describingFields = [
  'code',
  'errno',
  'sqlState',
  'fatal',
  'syscall',
  'address',
  'port',
] as const;

/** Causes followed at most this deep. */
const maxCauses = 5;

/**
 * The server's text with everything between its first and last quote taken out: a value is
 * always quoted in MySQL's and MariaDB's messages, and may itself hold quotes, so no pair of
 * quotes inside can be trusted to end it.
 */
function withoutQuoted(text: string): string {
  return text.replace(/'[\s\S]*'/, "'…'").replace(/"[\s\S]*"/, '"…"');
}

/**
 * The message with the server's text made safe. knex puts the statement's shape before it
 * (`insert into ... values (?, ?) - Duplicate entry ...`); a message that does not end with the
 * server's text is not one knex made, and only the server's text is kept.
 */
function messageOf(error: Error & { sqlMessage?: unknown }): string {
  const server = error.sqlMessage;
  if (typeof server !== 'string') return error.message;
  const prefix = error.message.endsWith(server)
    ? error.message.slice(0, error.message.length - server.length)
    : '';
  return prefix + withoutQuoted(server);
}

/** The stack's frames only: its first lines repeat the message as it was when first read. */
function framesOf(error: Error): string | undefined {
  return error.stack
    ?.split('\n')
    .filter((line) => /^\s+at /.test(line))
    .join('\n');
}

/**
 * Whether it is an Error, from this realm or another: a native module loaded once per process
 * (better-sqlite3) makes its errors, by prototype only, from the realm that first loaded it, which
 * neither `instanceof` nor the Error tag recognises in another (each test file of jest is one).
 */
function isError(value: unknown): value is Error {
  if (value instanceof Error) return true;
  const candidate = value as { message?: unknown; stack?: unknown } | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.message === 'string' &&
    typeof candidate.stack === 'string'
  );
}

/** pino's serializer for `err`: the error, and its causes, as the log may show them. */
export function errorForLog(error: unknown, depth = 0): unknown {
  if (!isError(error))
    return typeof error === 'object' && error !== null
      ? { type: 'non-error', fields: Object.keys(error) }
      : error;
  const shown: Record<string, unknown> = {
    type: error.constructor?.name ?? error.name,
    message: messageOf(error),
  };
  for (const field of describingFields) {
    const value = (error as unknown as Record<string, unknown>)[field];
    if (value !== undefined) shown[field] = value;
  }
  shown.stack = framesOf(error);
  if (error.cause !== undefined && depth < maxCauses)
    shown.cause = errorForLog(error.cause, depth + 1);
  return shown;
}
