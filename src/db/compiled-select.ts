/**
 * A SELECT written with knex's query builder, compiled to its dialect's SQL once and run with new
 * values each time: for the reads every request makes (the key lookup, one task), building and
 * compiling the query anew is a good part of the read's CPU.
 */
import type { Knex } from 'knex';
import type { Transaction } from './transactions';

/** Where each binding comes from: a value named at run time, or a constant of the query (a LIMIT). */
type Slot<Name> = { name: Name } | { constant: Knex.Value };

/** Runs the statement with these values, on the pool or inside a transaction. */
export type CompiledSelect<Name extends string> = <Row>(
  values: Record<Name, Knex.Value>,
  db?: Knex | Transaction,
) => Promise<Row[]>;

/**
 * `build` gets a stand-in for each named value to put where the value goes. The stand-ins are
 * strings no caller sends, so every binding of the compiled query is known for one or the other.
 */
export function compileSelect<Name extends string>(
  knex: Knex,
  names: readonly Name[],
  build: (values: Record<Name, string>) => Knex.QueryBuilder,
): CompiledSelect<Name> {
  const standIns = Object.fromEntries(names.map((name) => [name, `\u0000${name}\u0000`])) as Record<
    Name,
    string
  >;
  const { sql, bindings } = build(standIns).toSQL();
  const slots: Array<Slot<Name>> = bindings.map((binding) => {
    const name = names.find((candidate) => standIns[candidate] === binding);
    return name === undefined ? { constant: binding } : { name };
  });
  return async <Row>(values: Record<Name, Knex.Value>, db: Knex | Transaction = knex) => {
    const result: unknown = await db.raw(
      sql,
      slots.map((slot) => ('name' in slot ? values[slot.name] : slot.constant)),
    );
    // mysql2 answers a raw SELECT with [rows, fields], better-sqlite3 with the rows.
    return (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as Row[];
  };
}
