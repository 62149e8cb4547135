/**
 * Keyset (seek) paging, shared by every list: a page continues after the (sort value, id) of
 * the last item of the previous page, carried in an opaque cursor. It never uses OFFSET.
 */
import type { Knex } from 'knex';
import { InvalidCursorError } from '../errors';
import { readPage } from './page-reads';
import { dbTimestampPattern, isRealTimestamp, type DbTimestamp } from './timestamps';

export interface KeysetOrder {
  column: 'created_at' | 'updated_at';
  descending: boolean;
}

interface Position {
  at: DbTimestamp;
  id: string;
}

export interface PageQuery {
  /** Never a transaction: see readPage. */
  db: Knex;
  table: string;
  idColumn: string;
  /** Narrows the rows to the list's own: a tenant's projects, a project's tasks. */
  scope: (query: Knex.QueryBuilder) => void;
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
  visibleTo?: (query: Knex.QueryBuilder) => void;
  order: KeysetOrder;
  limit: number;
  cursor?: string;
}

export interface Page<Row> {
  rows: Row[];
  nextCursor: string | null;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function orderName(order: KeysetOrder): string {
  return (order.descending ? '-' : '') + order.column;
}

/** The cursor of the page that continues after `position`; opaque to clients. */
export function encodeCursor(order: KeysetOrder, position: Position): string {
  return Buffer.from(
    JSON.stringify({ s: orderName(order), at: position.at, id: position.id }),
  ).toString('base64url');
}

function decodeCursor(cursor: string, order: KeysetOrder): Position {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError('cannot be decoded');
  }
  const { s, at, id } = (decoded ?? {}) as Record<string, unknown>;
  if (
    typeof at !== 'string' ||
    !dbTimestampPattern.test(at) ||
    typeof id !== 'string' ||
    !uuidPattern.test(id)
  ) {
    throw new InvalidCursorError('cannot be decoded');
  }
  if (!isRealTimestamp(at)) throw new InvalidCursorError('names a position no item can have');
  if (s !== orderName(order))
    throw new InvalidCursorError(`was made for sort=${String(s)}, not sort=${orderName(order)}`);
  return { at, id };
}

/**
 * Selects one page. The ids are chosen first by an inner query the index covers, then joined
 * back to the table (a deferred join): MariaDB runs that as an index range that costs the same
 * on page 1000 as on page 1, where a plain keyset SELECT * steps over every earlier row. A list
 * in parts takes the first ids of each part's own seek, then the first of those.
 */
export async function selectPage<Row extends Record<string, unknown>>(
  query: PageQuery,
): Promise<Page<Row>> {
  const { db, table, idColumn, scope, order, limit } = query;
  const direction = order.descending ? 'desc' : 'asc';
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, order);
  const inOrder = (q: Knex.QueryBuilder) =>
    q
      .orderBy([
        { column: order.column, order: direction },
        { column: idColumn, order: direction },
      ])
      .limit(limit + 1);
  const seek = (columns: string[], part?: (q: Knex.QueryBuilder) => void) => {
    const ids = db(table).select(columns).where(scope);
    if (part) ids.where(part);
    if (after) {
      const [atOrBeyond, beyond] = order.descending ? ['<=', '<'] : ['>=', '>'];
      ids
        .where(order.column, atOrBeyond, after.at)
        .andWhere((q) =>
          q.where(order.column, beyond, after.at).orWhere(idColumn, beyond, after.id),
        );
    }
    return inOrder(ids);
  };
  const parts = query.parts ?? [];
  const keys = [idColumn, order.column];
  // Each seek is a derived table: SQLite allows no ORDER BY or LIMIT in a bare UNION arm.
  const seeks = () =>
    db.unionAll(parts.map((part, i) => db.select(keys).from(seek(keys, part).as(`seek${i}`))));
  const ids =
    parts.length > 1
      ? inOrder(db.select(idColumn).from(seeks().as('seeks')))
      : seek([idColumn], parts[0]);

  const select = (): Promise<Row[]> =>
    db(table)
      .select(`${table}.*`)
      .join(ids.as('page'), `${table}.${idColumn}`, `page.${idColumn}`)
      .modify((q) => query.visibleTo?.(q))
      .orderBy([
        { column: `${table}.${order.column}`, order: direction },
        { column: `${table}.${idColumn}`, order: direction },
      ]);
  const { rows, fitting } = await readPage(select, limit);
  if (rows.length <= fitting) return { rows, nextCursor: null };
  rows.length = fitting;
  const last = rows[fitting - 1];
  return {
    rows,
    nextCursor: encodeCursor(order, {
      at: last[order.column] as string,
      id: last[idColumn] as string,
    }),
  };
}
