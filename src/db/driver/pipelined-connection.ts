/**
 * A transaction's connection that holds back the statements whose answers the work does not wait
 * for (BEGIN, an event's insert) and sends them with the next statement it does wait for, or with
 * COMMIT. On MySQL they go as one multi-statement packet (on a Galera node, one at a time: see
 * GaleraAware): one round trip instead of several, and each round trip costs the service and
 * MariaDB CPU as well as time. A create (BEGIN, the task, its event, COMMIT) is one round trip, an
 * update two (the locking read waits for its row).
 *
 * It sits under knex, so knex builds and runs every statement as usual and sees the answer of the
 * one it sent; the held statements' answers are dropped, their failures are its failure.
 */
import type { Knex } from 'knex';

export interface Statement {
  sql: string;
  bindings: readonly unknown[];
}

/**
 * A held statement, and what its failure means to the work that held it: its answer is not
 * waited for, so a statement that can be refused says here how (a typed error, or undefined when
 * the failure is not one it knows).
 */
export interface HeldStatement extends Statement {
  failureMeans?(error: unknown): Error | undefined;
  /**
   * What its answer means when it is not what the work needs (a conditional write that changed
   * nothing): the transaction then fails with that error. On a Galera node and on SQLite nothing
   * after it runs; in a MySQL packet a COMMIT sent with it has run by then, so hold such a
   * statement only where it cannot miss there (its row locked by the transaction), or where what
   * is held after it depends on its effect. The answer is the driver's, or with LIBRARY_SHIMS=off
   * knex's raw answer (affected-rows.ts reads either).
   */
  answerMeans?(result: unknown): Error | undefined;
}

/** The failure of a transaction whose held statement answered what `answerMeans` refuses. */
class RefusedAnswer extends Error {
  constructor(readonly meaning: Error) {
    super(`a held statement's answer was refused: ${meaning.message}`);
  }
}

/** The refusal of the first of `statements` whose answer (in `results`, in the same order) is refused. */
function refusal(
  statements: readonly HeldStatement[],
  results: readonly unknown[],
): RefusedAnswer | undefined {
  for (const [i, statement] of statements.entries()) {
    const meaning = statement.answerMeans?.(results[i]);
    if (meaning !== undefined) return new RefusedAnswer(meaning);
  }
  return undefined;
}

type Callback = (error: unknown, results?: unknown, fields?: unknown) => void;

/**
 * Set on a connection to a Galera node (knex.ts): there the held statements go one at a time,
 * each in a packet of its own. Sent together, a transaction that lost a conflict with another
 * node's can be answered as committed although Galera kept nothing of it (BENCHMARKS.md).
 */
export interface GaleraAware {
  oneStatementAPacket?: boolean;
}

/** What the two drivers offer that this wraps: mysql2's callback `query`, better-sqlite3's `prepare`. */
interface DriverConnection extends GaleraAware {
  __knexUid?: string;
  query?(options: { sql: string }, bindings: unknown[] | undefined, callback: Callback): unknown;
  prepare?(sql: string): { run(bindings: unknown[]): unknown };
}

export interface PipelinedConnection {
  /** The connection to give knex's builders (`.connection()`). */
  readonly connection: object;
  /** Nothing sent yet and nothing held: the transaction has not begun at the database. */
  readonly idle: boolean;
  /** Whether BEGIN has gone to the database. */
  readonly begun: boolean;
  hold(statement: HeldStatement): void;
  /** Forgets what is held (the transaction is being rolled back). */
  drop(): void;
  /**
   * What a failure means: when `error` is the failure of a packet that carried held statements,
   * the typed error of the first of them that knows it (mysql2 does not say which statement of a
   * packet failed: a failure names only the errors its own statement can cause); otherwise
   * `error` itself.
   */
  explain(error: unknown): unknown;
}

/**
 * `opening` (BEGIN, and what must come before it) is sent before the first statement. Each held
 * statement is announced as knex announces its own (a `query` event, marked `pipelined`), in the
 * order the work made them, so the benchmark's statement check sees every statement and packet.
 */
export function pipelined(
  knex: Knex,
  connection: DriverConnection,
  opening: readonly Statement[],
): PipelinedConnection {
  const held: HeldStatement[] = [];
  let begun = false;
  // The held statements of the last packet that failed, and its error.
  let failed: { error: unknown; statements: HeldStatement[] } | undefined;
  const noteFailure = (error: unknown, statements: HeldStatement[]) => {
    failed = { error, statements };
    return error;
  };
  const announce = (statement: Statement) =>
    knex.client.emit('query', {
      __knexUid: connection.__knexUid,
      sql: statement.sql,
      bindings: statement.bindings,
      pipelined: true,
    });
  const takeHeld = () => {
    const statements = begun ? held.splice(0) : [...opening, ...held.splice(0)];
    begun = true;
    return statements;
  };

  // What knex's runner uses of a connection it is given: its id, and the driver's one entry
  // point. A plain object, not a Proxy of the connection: a Proxy's traps cost on every call.
  const wrapped =
    knex.client.config.client === 'mysql2'
      ? {
          __knexUid: connection.__knexUid,
          query(options: { sql: string }, bindings: unknown[] | undefined, callback: Callback) {
            const before = takeHeld();
            if (before.length === 0) return connection.query!(options, bindings, callback);
            const noting: Callback = (error, results, fields) =>
              callback(error && noteFailure(error, before), results, fields);
            if (connection.oneStatementAPacket)
              return inTurn(
                connection,
                before,
                () => connection.query!(options, bindings, callback),
                noting,
              );
            const sql = [...before.map((statement) => statement.sql), options.sql].join(';\n');
            const allBindings = [
              ...before.flatMap((statement) => statement.bindings),
              ...(bindings ?? []),
            ];
            // A multi-statement answers with one result (and one list of fields) per statement.
            return connection.query!({ ...options, sql }, allBindings, (error, results, fields) => {
              if (error) return noting(error);
              const refused = refusal(before, results as unknown[]);
              return refused
                ? noting(refused)
                : callback(null, (results as unknown[]).at(-1), (fields as unknown[]).at(-1));
            });
          },
        }
      : {
          __knexUid: connection.__knexUid,
          // better-sqlite3 runs in-process: no round trip to save, the held statements simply run first.
          prepare(sql: string) {
            const before = takeHeld();
            try {
              for (const statement of before) {
                const refused = refusal(
                  [statement],
                  [
                    connection.prepare!(statement.sql).run(
                      formatBindings(knex, statement.bindings),
                    ),
                  ],
                );
                if (refused) throw refused;
              }
            } catch (error) {
              throw noteFailure(error, before);
            }
            return connection.prepare!(sql);
          },
        };
  for (const statement of opening) announce(statement);

  return {
    connection: wrapped,
    get idle() {
      return !begun && held.length === 0;
    },
    get begun() {
      return begun;
    },
    hold(statement) {
      announce(statement);
      held.push(statement);
    },
    drop() {
      held.length = 0;
    },
    explain(error) {
      if (failed === undefined || failed.error !== error) return error;
      if (error instanceof RefusedAnswer) return error.meaning;
      for (const statement of failed.statements) {
        const meaning = statement.failureMeans?.(error);
        if (meaning !== undefined) return meaning;
      }
      return error;
    },
  };
}

/** Sends `statements` one after another, each alone, then `last`; the first failure or refused answer is `callback`'s. */
function inTurn(
  connection: DriverConnection,
  statements: HeldStatement[],
  last: () => unknown,
  callback: Callback,
): void {
  const send = (i: number): unknown =>
    i === statements.length
      ? last()
      : connection.query!(
          { sql: statements[i].sql },
          [...statements[i].bindings],
          (error, result) => {
            const failure = error ?? refusal([statements[i]], [result]);
            return failure ? callback(failure) : send(i + 1);
          },
        );
  send(0);
}

/** knex's own conversion of bindings for better-sqlite3 (dates to numbers, booleans to 0 and 1). */
function formatBindings(knex: Knex, bindings: readonly unknown[]): unknown[] {
  return (
    knex.client as unknown as { _formatBindings(bindings: readonly unknown[]): unknown[] }
  )._formatBindings(bindings);
}
