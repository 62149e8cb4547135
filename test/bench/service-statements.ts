/**
 * The statements the service sends for each benchmarked operation, noted from knex as it runs
 * them once in this process: what the baseline must run too, for its figures to be a fair floor.
 * The event numbering's work beside the requests (its lease, its transactions) is not a
 * request's: it is left out.
 */
import { loadConfig } from '../../src/config';
import { startService } from '../../src/server';
import { operations, type Fixture } from './fixture';
import type { Operation } from './load';

export async function serviceStatements(databaseUrl: string, fixture: Fixture): Promise<Record<string, string[]>> {
  const service = await startService(loadConfig({ DATABASE_URL: databaseUrl, PORT: '0', LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '0' }));
  const call = ({ method, path, body }: ReturnType<Operation['next']>) =>
    fetch(service.url + path, { method, body, headers: { Authorization: `Bearer ${fixture.key}`, 'Content-Type': 'application/json' } });
  const statements: Record<string, string[]> = {};
  try {
    // The key's first use records it (then once a minute, as under load): not part of what is compared.
    await call(operations(fixture)[1].next());
    for (const operation of operations(fixture)) {
      const sent: Array<{ sql: string; __knexTxId?: string }> = [];
      const note = (query: { sql: string; __knexTxId?: string }) => sent.push(query);
      service.knex.on('query', note);
      const response = await call(operation.next());
      service.knex.off('query', note);
      if (!response.ok) throw new Error(`${operation.name} answered ${response.status}`);
      const background = (sql: string) => /`?(leases|event_sequences)`?/.test(sql);
      // A request's own transactions begin while it is noted and touch no lease.
      const backgroundTransactions = new Set(sent.filter((q) => background(q.sql)).map((q) => q.__knexTxId));
      const requestTransactions = new Set(sent.filter((q) => q.sql === 'BEGIN;' && !backgroundTransactions.has(q.__knexTxId)).map((q) => q.__knexTxId));
      const ofRequest = (q: (typeof sent)[number]) => (q.__knexTxId === undefined ? !background(q.sql) : requestTransactions.has(q.__knexTxId));
      statements[operation.name] = sent.filter(ofRequest).map((q) => q.sql);
    }
  } finally {
    await service.stop();
  }
  return statements;
}
