/**
 * `make bench`, the matrix of hostile tenants (issue 44): each cell varies one dimension of a base
 * case (one hostile tenant, 20 endpoints, small events, receivers that answer at once), plus the
 * combinations that hurt most, and prints one row per cell. BENCH_HOSTILE_CELLS picks cells by
 * name (comma-separated, each a part of a name); BENCH_HOSTILE_SECONDS sets how long each writes.
 */
import { percentile, runCell, type HostileCell } from './hostile-tenants';
import { fmt, mark } from './report';

const base: HostileCell = {
  name: 'base',
  receivers: 'ok',
  names: 'ok',
  endpoints: 20,
  eventChars: 20,
  tenants: 1,
  events: 30,
};
const vary = (name: string, change: Partial<HostileCell>): HostileCell => ({
  ...base,
  ...change,
  name,
});

export const cells: HostileCell[] = [
  base,
  ...(
    ['hang', 'drip', 'huge-body', 'huge-headers', 'redirect', 'reset', '500', '410'] as const
  ).map((receivers) => vary(`receivers ${receivers}`, { receivers })),
  ...(['never', 'once', 'late', 'fifty', 'changing'] as const).map((names) =>
    vary(`names ${names}`, { names }),
  ),
  vary('endpoints 1', { endpoints: 1 }),
  vary('endpoints 50 (the maximum, set)', { endpoints: 50 }),
  vary('events 10,000 characters', { eventChars: 10_000 }),
  vary('tenants 5', { tenants: 5 }),
  vary('tenants 15', { tenants: 15 }),
  vary('names once and late x 15 tenants', {
    names: ['once', 'late'],
    tenants: 15,
  }),
  vary('receivers hang x 15 tenants x 50 endpoints', {
    receivers: 'hang',
    tenants: 15,
    endpoints: 50,
  }),
  vary('names late x events 10,000 characters', { names: 'late', eventChars: 10_000 }),
];

export async function hostileMatrix(mysqlUrl: string): Promise<void> {
  const wanted = process.env.BENCH_HOSTILE_CELLS?.split(',').map((part) => part.trim());
  const seconds = Number(process.env.BENCH_HOSTILE_SECONDS ?? 30);
  console.log(
    `\n## Hostile tenants: each cell against a bystander tenant writing 5 a second for ${seconds} s\n`,
  );
  console.log(
    '| cell | bystander p50 | p99 (< 2 s) | lost | sent twice | thread restarts | thread heap, most (limit) | service RSS (< 300 MB) | all met |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const cell of cells) {
    if (wanted && !wanted.some((part) => cell.name.includes(part))) continue;
    const r = await runCell(cell, { mysqlUrl, seconds });
    const p99 = percentile(r.delays, 99);
    const met =
      p99 < 2000 &&
      r.lost === 0 &&
      r.sentTwice === 0 &&
      r.threadRestarts === 0 &&
      r.threadHeapMb < r.threadHeapLimitMb &&
      r.rssMb < 300;
    console.log(
      `| ${cell.name} | ${fmt(percentile(r.delays, 50), 0)} ms | ${fmt(p99, 0)} ms | ${r.lost} | ${r.sentTwice} | ${r.threadRestarts} | ${fmt(r.threadHeapMb, 0)} MB (${fmt(r.threadHeapLimitMb, 0)}) | ${fmt(r.rssMb, 0)} MB | ${mark(met)} |`,
    );
  }
}

if (require.main === module)
  void hostileMatrix(process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/').then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
