/**
 * The statements the service sends for each benchmarked operation, noted from knex as it runs
 * them once in this process: what the baseline must run too, for its figures to be a fair floor.
 * The event numbering's background job (its lease, its transactions) is not a
 * request's: it is left out.
 */
import { loadConfig } from '../../src/config';
import { startService } from '../../src/server';
import { operations, type Fixture } from './fixture';
import type { Operation } from './load';

/**
 * The background parts' own statements: the numbering's lease, its look for events without a
 * number, its counters and its isolation level; the planning and sending of webhook deliveries.
 */
const background = (sql: string) =>
  /leases|event_sequences|`?sequence`? is null|^SET TRANSACTION|webhook_/.test(sql);

/** A statement as knex announces it; `pipelined` when it is held to go with the next one. */
interface NotedQuery {
  sql: string;
  __knexUid?: string;
  pipelined?: boolean;
}

interface Entry {
  sql: string;
  keep: boolean;
  pipelined: boolean;
}

/**
 * The packets of the request, without the background parts': a transaction (BEGIN to COMMIT
 * on one connection) that runs any statement of theirs is theirs, whole, and so is one whose
 * BEGIN came before the noting did (the connection was theirs from then to its COMMIT).
 */
function requestStatements(sent: NotedQuery[]): string[] {
  const open = new Map<string | undefined, Entry[]>();
  const before = new Map<string | undefined, Entry[]>();
  const marked = sent.map((query) => {
    const ends = query.sql === 'COMMIT' || query.sql === 'ROLLBACK';
    const transaction = open.get(query.__knexUid);
    const entry = {
      sql: query.sql,
      keep: !background(query.sql),
      pipelined: query.pipelined === true,
    };
    // A transaction that began before noting did is the numbering's: what its connection ran up to its end too.
    if (ends && transaction === undefined) {
      entry.keep = false;
      for (const earlier of before.get(query.__knexUid) ?? []) earlier.keep = false;
    }
    before.set(query.__knexUid, [...(before.get(query.__knexUid) ?? []), entry]);
    if (query.sql === 'BEGIN') open.set(query.__knexUid, [entry]);
    else if (transaction) {
      transaction.push(entry);
      if (ends) {
        open.delete(query.__knexUid);
        if (transaction.some((e) => !e.keep)) for (const e of transaction) e.keep = false;
      }
    }
    return entry;
  });
  // A transaction still under way when noting ended is the numbering's: requests' are noted whole.
  for (const transaction of open.values()) for (const e of transaction) e.keep = false;
  return packets(marked.filter((e) => e.keep));
}

/** Statements held back to go with the next one (`pipelined`) joined with it, as one packet. */
function packets(entries: Entry[]): string[] {
  const sent: string[] = [];
  let held: string[] = [];
  for (const entry of entries) {
    held.push(entry.sql);
    if (entry.pipelined) continue;
    sent.push(held.join(';\n'));
    held = [];
  }
  return sent;
}

export async function serviceStatements(
  databaseUrl: string,
  fixture: Fixture,
): Promise<Record<string, string[]>> {
  const service = await startService(
    loadConfig({
      DATABASE_URL: databaseUrl,
      PORT: '0',
      LOG_LEVEL: 'silent',
      RATE_LIMIT_PER_MINUTE: '0',
    }),
  );
  const call = ({ method, path, body }: ReturnType<Operation['next']>) =>
    fetch(service.url + path, {
      method,
      body,
      headers: { Authorization: `Bearer ${fixture.key}`, 'Content-Type': 'application/json' },
    });
  const statements: Record<string, string[]> = {};
  try {
    // The key's first use records it (then once a minute, as under load): not part of what is compared.
    await call(operations(fixture)[1].next());
    for (const operation of operations(fixture)) {
      const sent: NotedQuery[] = [];
      const note = (query: NotedQuery) => sent.push(query);
      service.knex.on('query', note);
      const response = await call(operation.next());
      service.knex.off('query', note);
      if (!response.ok) throw new Error(`${operation.name} answered ${response.status}`);
      statements[operation.name] = requestStatements(sent);
    }
  } finally {
    await service.stop();
  }
  return statements;
}
