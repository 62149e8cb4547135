/**
 * `make bench`, the matrix of hostile tenants (issue 44), on MariaDB: each cell varies one
 * dimension of a base case (one hostile tenant, 20 endpoints, small events, receivers that answer
 * at once), plus the combinations that hurt most, against a bystander tenant writing 5 creates a
 * second, and prints one row per cell (test/support/hostile-tenants.ts runs each).
 *
 * BENCH_HOSTILE_CELLS: the cells to run, by key, comma-separated (all); BENCH_HOSTILE_SECONDS:
 * how long each cell's bystander writes (30).
 */
import {
  nameKinds,
  percentile,
  receiverKinds,
  runHostileTenants,
  targetsMet,
  type HostileTenant,
} from '../support/hostile-tenants';
import { fmt, mark } from './report';

interface Cell {
  /** For BENCH_HOSTILE_CELLS. */
  key: string;
  name: string;
  tenants: HostileTenant[];
}

const base: HostileTenant = {
  receivers: 'ok',
  names: 'ok',
  endpoints: 20,
  eventChars: 20,
  events: 30,
};
/** `count` hostile tenants, each the base with `change`. */
const cell = (key: string, name: string, change: Partial<HostileTenant>, count = 1): Cell => ({
  key,
  name,
  tenants: Array.from({ length: count }, () => ({ ...base, ...change })),
});

export const cells: Cell[] = [
  cell('base', 'one tenant, 20 endpoints, small events, all answered at once', {}),
  ...receiverKinds.map((receivers) => cell(receivers, `receivers ${receivers}`, { receivers })),
  ...nameKinds.map((names) => cell(names, `names ${names}`, { names })),
  cell('endpoints-1', 'endpoints 1', { endpoints: 1 }),
  cell('endpoints-50', 'endpoints 50 (the maximum, set)', { endpoints: 50 }),
  cell('events-10000', 'events 10,000 characters', { eventChars: 10_000 }),
  cell('tenants-5', 'tenants 5', {}, 5),
  cell('tenants-15', 'tenants 15', {}, 15),
  {
    key: 'once-late-x15',
    name: 'names once (8) and late (7) x 15 tenants',
    tenants: Array.from({ length: 15 }, (_, t) => ({ ...base, names: t % 2 ? 'late' : 'once' })),
  },
  cell(
    'hang-x15-x50',
    'receivers hang x 15 tenants x 50 endpoints',
    { receivers: 'hang', endpoints: 50 },
    15,
  ),
  cell('late-x-events-10000', 'names late x events 10,000 characters', {
    names: 'late',
    eventChars: 10_000,
  }),
];

export async function hostileMatrix(mysqlUrl: string): Promise<void> {
  const wanted = process.env.BENCH_HOSTILE_CELLS?.split(',').map((key) => key.trim());
  const unknown = wanted?.filter((key) => !cells.some((c) => c.key === key)) ?? [];
  if (unknown.length > 0)
    throw new Error(
      `BENCH_HOSTILE_CELLS: no cell ${unknown.join(', ')}; the cells: ${cells.map((c) => c.key).join(', ')}`,
    );
  const seconds = Number(process.env.BENCH_HOSTILE_SECONDS ?? 30);
  console.log(
    `\n## Hostile tenants: each cell against a bystander tenant writing 5 creates a second for ${seconds} s\n`,
  );
  console.log(
    '| cell | bystander p50 | p99 (< 2 s) | lost | sent twice | thread restarts | thread heap, most (limit) | service RSS (< 300 MB) | all met |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const { key, name, tenants } of cells) {
    if (wanted && !wanted.includes(key)) continue;
    const r = await runHostileTenants(tenants, { mysqlUrl, seconds });
    console.log(
      `| \`${key}\` ${name} | ${fmt(percentile(r.delays, 50))} ms | ${fmt(percentile(r.delays, 99))} ms | ${r.lost} | ${r.sentTwice} | ${r.threadRestarts} | ${fmt(r.threadHeapMb)} MB (${fmt(r.threadHeapLimitMb)}) | ${fmt(r.rssMb)} MB | ${mark(targetsMet(r))} |`,
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
