/**
 * Keyset (seek) paging, shared by every list: a page continues after the (sort value, id) of
 * the last item of the previous page, carried in an opaque cursor. It never uses OFFSET. An order
 * may lead with another column (a task's due date or priority) before its timestamp: the cursor
 * then carries that value too, null included.
 */
import type { Knex } from 'knex';
import { InvalidCursorError } from '../errors';
import { compileSelect, type CompiledSelect } from './compiled-select';
import { readPage } from './page-reads';
import { dbTimestampPattern, isRealTimestamp, type DbTimestamp } from './timestamps';

export interface KeysetOrder {
  /** The timestamp that orders the list, or that breaks the ties of `leading`. */
  column: 'created_at' | 'updated_at';
  /** The whole key reversed, ties included; null leading values stay last all the same. */
  descending: boolean;
  /** A column that orders before `column`: a task's due date or priority. */
  leading?: LeadingKey;
}

export interface LeadingKey {
  column: string;
  /** Rows where it is null come after every other, in either direction. */
  nullable: boolean;
  /** Whether a cursor's value for it is one a row can have (null is checked apart). */
  isValue: (value: unknown) => boolean;
}

type Condition = (query: Knex.QueryBuilder) => void;

/** Where the previous page ended: `lead` is the leading key's value, when the order has one. */
interface Position {
  lead?: Knex.Value;
  at: DbTimestamp;
  id: string;
}

/** The values a page's conditions compare, by name: see PageQuery's `shape`. */
export type PageValues = Record<string, Knex.Value>;

export interface PageQuery {
  /** Never a transaction: see readPage. */
  db: Knex;
  table: string;
  idColumn: string;
  /** The columns a page's rows hold (qualified by the table); all of them when absent. */
  columns?: readonly string[];
  /** Narrows the rows to the list's own: a tenant's projects, a project's tasks. */
  scope: (query: Knex.QueryBuilder, values: PageValues) => void;
  /**
   * Where the page's ids are chosen, when not in `table`: a table of the same ids that holds the
   * order's columns too, which `scope` narrows (a task's words, its tenant and created_at).
   */
  seekTable?: string;
  /**
   * A filter as parts that each have an index in the page's order: a task list filtered by
   * several statuses, one part per status. No index serves `status IN (…)` and the order
   * together, so the page's ids are merged from one seek through each part.
   */
  parts?: Array<(query: Knex.QueryBuilder) => void>;
  /**
   * Keeps only the rows the caller may see (a join to the owning tenant), applied to the page's
   * rows after the ids are chosen, so the choice stays a scan of the index alone.
   */
  visibleTo?: (query: Knex.QueryBuilder, values: PageValues) => void;
  order: KeysetOrder;
  limit: number;
  cursor?: string;
  /** What `scope` and `visibleTo` compare, when they take their values from their argument. */
  values?: PageValues;
  /**
   * Names the statement `scope`, `parts` and `visibleTo` build when every value they compare
   * comes from `values` (a list without filters): it is then compiled once for the shape, the
   * order, the kind of cursor and the limit, and run with the values, rather than built by knex
   * for each page, which was a good part of a list's CPU. A list whose conditions hold values of
   * their own names none.
   */
  shape?: string;
}

export interface Page<Row> {
  rows: Row[];
  nextCursor: string | null;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The sort as clients name it (`-due_on`): a cursor is made for one. */
function orderName(order: KeysetOrder): string {
  return (order.descending ? '-' : '') + (order.leading?.column ?? order.column);
}

/** The cursor of the page that continues after `position`; opaque to clients. */
export function encodeCursor(order: KeysetOrder, position: Position): string {
  const { lead, at, id } = position;
  const key = order.leading
    ? { s: orderName(order), v: lead, at, id }
    : { s: orderName(order), at, id };
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

function decodeCursor(cursor: string, order: KeysetOrder): Position {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError('cannot be decoded');
  }
  const { s, v, at, id } = (decoded ?? {}) as Record<string, unknown>;
  if (
    typeof at !== 'string' ||
    !dbTimestampPattern.test(at) ||
    typeof id !== 'string' ||
    !uuidPattern.test(id)
  ) {
    throw new InvalidCursorError('cannot be decoded');
  }
  if (s !== orderName(order))
    throw new InvalidCursorError(`was made for sort=${String(s)}, not sort=${orderName(order)}`);
  const { leading } = order;
  const leadIsValid =
    leading === undefined ||
    (v === null ? leading.nullable : v !== undefined && leading.isValue(v));
  if (!isRealTimestamp(at) || !leadIsValid)
    throw new InvalidCursorError('names a position no item can have');
  return { lead: v as Knex.Value | undefined, at, id };
}

/**
 * The rows after `values` in the order of `columns` (the id last), spelled out as MariaDB seeks
 * on it: `a >= ? AND (a > ? OR (b >= ? AND (b > ? OR id > ?)))`. It reads no index range for the
 * row-value form `(a, b, id) > (?, ?, ?)` (the project's toolchain notes).
 */
function beyond(columns: string[], values: Knex.Value[], descending: boolean): Condition {
  const [atOrBeyond, past] = descending ? ['<=', '<'] : ['>=', '>'];
  const [column, ...laterColumns] = columns;
  const [value, ...laterValues] = values;
  if (laterColumns.length === 0) return (q) => q.where(column, past, value);
  return (q) =>
    q
      .where(column, atOrBeyond, value)
      .andWhere((inner) =>
        inner.where(column, past, value).orWhere(beyond(laterColumns, laterValues, descending)),
      );
}

/**
 * A run of the order: a condition whose rows all come before the next run's, and the columns
 * that order its rows. An order whose leading key may be null has two runs, the rows with a value
 * and then those without, since no index puts nulls last in both directions; each run is one range
 * of an index that starts with the leading column, ordered by its columns after the ones the run
 * holds equal (MariaDB sorts every matching row when the ORDER BY names a column it does not see
 * as constant, as `IS NULL` leaves it, or has an expression).
 */
interface Run {
  where: Condition;
  /** False in the run without a leading value: it orders by the timestamp and the id alone. */
  byLead: boolean;
}

/** The order's runs after the position, or all of them. */
function runsAfter(order: KeysetOrder, table: string, idColumn: string, after?: Position): Run[] {
  const { column, descending, leading } = order;
  const [at, id] = [`${table}.${column}`, `${table}.${idColumn}`];
  const lead = leading && `${table}.${leading.column}`;
  const past = (columns: string[], values: Knex.Value[]): Condition =>
    after ? beyond(columns, values, descending) : () => {};
  const positionAt = after ? [after.at, after.id] : [];
  if (lead === undefined) return [{ where: past([at, id], positionAt), byLead: false }];
  const withLead = past([lead, at, id], [after?.lead ?? null, ...positionAt]);
  if (!leading!.nullable) return [{ where: withLead, byLead: true }];
  // Past a row without a value, only the later ones of those; else all of them.
  if (after?.lead === null)
    return [{ where: (q) => q.whereNull(lead).where(past([at, id], positionAt)), byLead: false }];
  return [
    { where: (q) => q.whereNotNull(lead).where(withLead), byLead: true },
    { where: (q) => q.whereNull(lead), byLead: false },
  ];
}

/**
 * Orders rows of `table` (`prefix` names it, or the derived table the ids were merged in): by the
 * order's whole key, nulls last, or within one run by that run's columns.
 */
function inKeyOrder(
  query: Knex.QueryBuilder,
  order: KeysetOrder,
  idColumn: string,
  prefix = '',
  run?: Run,
) {
  const direction = order.descending ? 'desc' : 'asc';
  const lead = order.leading?.column;
  const byLead = lead !== undefined && (run?.byLead ?? true);
  const columns = [...(byLead ? [lead] : []), order.column, idColumn];
  if (order.leading?.nullable && run === undefined) query.orderByRaw('?? is null', [prefix + lead]);
  return query.orderBy(columns.map((column) => ({ column: prefix + column, order: direction })));
}

/** What a cursor records of a row: its place in the order. */
function positionOf(order: KeysetOrder, idColumn: string, row: Record<string, unknown>): Position {
  return {
    ...(order.leading && { lead: row[order.leading.column] as Knex.Value }),
    at: row[order.column] as DbTimestamp,
    id: row[idColumn] as string,
  };
}

/**
 * For a query of its own (a search): orders `query`, rows of `table` possibly joined to others,
 * and keeps those after the cursor's position, in one statement. `cursorAfterRow` makes the next
 * page's cursor. selectPage is the cheaper way for a list whose indexes serve its order.
 */
export function seekInOrder(
  query: Knex.QueryBuilder,
  where: { table: string; idColumn: string; order: KeysetOrder; cursor?: string },
): Knex.QueryBuilder {
  const { table, idColumn, order, cursor } = where;
  const after = cursor === undefined ? undefined : decodeCursor(cursor, order);
  const runs = runsAfter(order, table, idColumn, after);
  query.where((q) => {
    for (const run of runs) q.orWhere(run.where);
  });
  return inKeyOrder(query, order, idColumn, `${table}.`);
}

/** The cursor of the page after the one whose last row is `row` (the table's columns, as read). */
export function cursorAfterRow(
  order: KeysetOrder,
  idColumn: string,
  row: Record<string, unknown>,
): string {
  return encodeCursor(order, positionOf(order, idColumn, row));
}

/** The statement of one page's rows after `after`: `values` are what its conditions compare. */
function pageStatement(
  query: PageQuery,
  after: Position | undefined,
  values: PageValues,
): Knex.QueryBuilder {
  const { db, table, idColumn, order, limit } = query;
  const seekTable = query.seekTable ?? table;
  const runs = runsAfter(order, seekTable, idColumn, after);
  const parts = query.parts ?? [() => {}];
  const keys = [idColumn, order.column, ...(order.leading ? [order.leading.column] : [])];
  const seek = (columns: string[], part: Condition, run: Run) =>
    inKeyOrder(
      db(seekTable)
        .select(columns)
        .where((q) => query.scope(q, values))
        .where(part)
        .where(run.where),
      order,
      idColumn,
      '',
      run,
    ).limit(limit + 1);
  const seeks = parts.flatMap((part) => runs.map((run) => [part, run] as const));
  // Each seek is a derived table: SQLite allows no ORDER BY or LIMIT in a bare UNION arm.
  const merged = () =>
    db.unionAll(
      seeks.map(([part, run], i) => db.select(keys).from(seek(keys, part, run).as(`seek${i}`))),
    );
  const ids =
    seeks.length > 1
      ? inKeyOrder(db.select(idColumn).from(merged().as('seeks')), order, idColumn).limit(limit + 1)
      : seek([idColumn], ...seeks[0]);
  return inKeyOrder(
    db(table)
      .select(query.columns ?? `${table}.*`)
      .join(ids.as('page'), `${table}.${idColumn}`, `page.${idColumn}`)
      .modify((q) => query.visibleTo?.(q, values)),
    order,
    idColumn,
    `${table}.`,
  );
}

/** Compiled page statements, by shape: a bounded number, the oldest dropped first. */
const compiledPages = new Map<string, CompiledSelect<string>>();
const mostCompiledPages = 256;
const positionNames = { lead: '\u0000lead', at: '\u0000at', id: '\u0000id' } as const;

/** The rows of one page of a list that names its shape, by the statement compiled for it. */
function selectCompiled<Row>(query: PageQuery, after: Position | undefined): Promise<Row[]> {
  const { db, order, limit } = query;
  const values = query.values ?? {};
  // A cursor past a row without a leading value makes a statement of another shape (IS NULL).
  const cursorKind = after === undefined ? 'first' : after.lead === null ? 'after null' : 'after';
  const key = [db.client.dialect, query.shape, orderName(order), cursorKind, limit].join('|');
  let select = compiledPages.get(key);
  if (select === undefined) {
    const names = [...Object.keys(values), ...Object.values(positionNames)];
    select = compileSelect(db, names, (standIns) =>
      pageStatement(
        query,
        after && {
          lead: after.lead === null ? null : standIns[positionNames.lead],
          at: standIns[positionNames.at],
          id: standIns[positionNames.id],
        },
        standIns,
      ),
    );
    if (compiledPages.size >= mostCompiledPages)
      compiledPages.delete(compiledPages.keys().next().value!);
    compiledPages.set(key, select);
  }
  return select<Row>(
    {
      ...values,
      [positionNames.lead]: after?.lead ?? null,
      [positionNames.at]: after?.at ?? null,
      [positionNames.id]: after?.id ?? null,
    },
    db,
  );
}

/**
 * Selects one page. The ids are chosen first by an inner query the index covers, then joined
 * back to the table (a deferred join): MariaDB runs that as an index range that costs the same
 * on page 1000 as on page 1, where a plain keyset SELECT * steps over every earlier row. A list
 * in parts, or an order in runs, takes the first ids of each part's and run's own seek, then the
 * first of those.
 */
export async function selectPage<Row extends Record<string, unknown>>(
  query: PageQuery,
): Promise<Page<Row>> {
  const { idColumn, order, limit } = query;
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, order);
  const select = (): Promise<Row[]> =>
    query.shape === undefined
      ? (pageStatement(query, after, query.values ?? {}) as unknown as Promise<Row[]>)
      : selectCompiled<Row>(query, after);
  const { rows, fitting } = await readPage(select, limit);
  if (rows.length <= fitting) return { rows, nextCursor: null };
  rows.length = fitting;
  return { rows, nextCursor: cursorAfterRow(order, idColumn, rows[fitting - 1]) };
}
