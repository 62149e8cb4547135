/**
 * Pages of long rows are built one per turn of the event loop, and read two at a time. Many
 * clients asking at once for pages of the longest tasks would otherwise have a page per pooled
 * connection arrive in the same turn, each milliseconds of CPU to parse, measure, serialise and
 * write, and every other request, /healthz too, would wait behind them all. Built one per turn,
 * they let the service answer what else has arrived in between. A page waiting for its turn holds
 * its rows, so while pages are long fewer are read at once, to keep that memory small.
 *
 * Whether pages are long is known only once one is read: the last page read decides how many
 * reads may run, and short pages (most lists) are read as many at once as the pool allows.
 *
 * No page read runs in a transaction: one waiting for a place while holding a connection could
 * wait for ever on reads that hold the places and wait for a connection.
 */
import { poolSize } from './knex';
import { mayPassPageSize, rowsWithinPageSize } from './page-size';

/** While pages of long rows are read, this many page reads run at once. */
const longPageReads = 2;

let reading = 0;
let lastPageLong = false;
const waitingToRead: Array<() => void> = [];
let lastTurn: Promise<void> = Promise.resolve();

/** Resolves in a turn of the event loop of its own (its check phase), after every turn asked for before it. */
function turnOfItsOwn(): Promise<void> {
  const turn = lastTurn.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
  lastTurn = turn;
  return turn;
}

const places = () => (lastPageLong ? longPageReads : poolSize);

/** Starts waiting reads, first come first served, while there are places. */
function admit(): void {
  while (waitingToRead.length > 0 && reading < places()) {
    reading++;
    waitingToRead.shift()!();
  }
}

async function startReading(): Promise<void> {
  if (waitingToRead.length === 0 && reading < places()) reading++;
  else await new Promise<void>((resolve) => waitingToRead.push(resolve));
}

function doneReading(): void {
  reading--;
  admit();
}

/**
 * Reads a page's rows (`select`: up to `limit` and one more, to know whether there is more) and
 * answers how many of the first `limit` fit in the page. Once it answers, the caller builds the
 * page's reply without waiting on anything else, so that work too falls in the page's turn.
 */
export async function readPage<Row extends object>(
  select: () => Promise<Row[]>,
  limit: number,
): Promise<{ rows: Row[]; fitting: number }> {
  await startReading();
  try {
    const rows = await select();
    const candidates = rows.slice(0, limit);
    lastPageLong = mayPassPageSize(candidates);
    if (!lastPageLong) return { rows, fitting: candidates.length };
    const fitting = rowsWithinPageSize(candidates);
    // Only what the page needs waits for the turn: its rows, and the next one to say there is more.
    rows.length = Math.min(rows.length, fitting + 1);
    await turnOfItsOwn();
    return { rows, fitting };
  } finally {
    doneReading();
  }
}
