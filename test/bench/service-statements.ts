/**
 * The statements the service sends for each benchmarked operation, noted from knex as it runs
 * them once in this process: what the baseline must run too, for its figures to be a fair floor.
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
      const sent: string[] = [];
      const note = (query: { sql: string }) => sent.push(query.sql);
      service.knex.on('query', note);
      const response = await call(operation.next());
      service.knex.off('query', note);
      if (!response.ok) throw new Error(`${operation.name} answered ${response.status}`);
      statements[operation.name] = sent;
    }
  } finally {
    await service.stop();
  }
  return statements;
}
