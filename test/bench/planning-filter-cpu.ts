/**
 * The planning bench's webhook filter: what an endpoint's `filter` of 10 conditions adds to the
 * service's work per delivery (issue 46: under 5 %). Two tenants on a database of their own, each
 * with one endpoint on the loopback receiver: one with the filter (every event passes it), one
 * without. A round writes copies of 1,000 real `task.updated` events (made by a bulk update of the
 * tenant's tasks) straight into the events table, as another instance would, and lasts until the
 * receiver has them all: the service numbers them, plans their deliveries (where the filter is
 * read) and delivers them. Rounds alternate between the tenants after a warm-up round each.
 *
 * Measured twice: the service's CPU time per delivery (the median round), and its instructions
 * per delivery counted by valgrind's callgrind (callgrind.ts), which the machine's load does not
 * move: the median round's outside V8's collector and compilers, plus theirs over all rounds.
 *
 * BENCH_PLANNING_FILTER_EVENTS (1000 per round), BENCH_PLANNING_FILTER_ROUNDS (5 of each, timed),
 * BENCH_PLANNING_COUNTED_ROUNDS (3 of each under callgrind; 0 leaves callgrind out).
 */
import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import type { components } from '../../generated/api';
import { issueApiKey } from '../../src/cli/issue-api-key';
import { createRepositories } from '../../src/all-repositories';
import type { TaskFilter } from '../../src/db/task-filter';
import { awaitingNumber } from '../../src/db/event-log';
import { nowForDb } from '../../src/db/timestamps';
import { createMysqlDatabase } from '../support/mysql-database';
import { apiClient, type ApiCall } from './api-client';
import { startCountedServer, type Instructions } from './callgrind';
import { withKnex } from './fixture';
import { migrateToLatest } from '../../src/db/migrate';
import { bulkTasks, projectOfTasks } from './planning-bulk';
import { serviceArguments, startServerProcess, type ServerProcess } from './processes';
import type { Receiver } from './receiver';
import { fmt, mark, quantile } from './report';

type TaskBulkResult = components['schemas']['TaskBulkResult'];

const settings = {
  events: Number(process.env.BENCH_PLANNING_FILTER_EVENTS ?? 1000),
  rounds: Number(process.env.BENCH_PLANNING_FILTER_ROUNDS ?? 5),
  countedRounds: Number(process.env.BENCH_PLANNING_COUNTED_ROUNDS ?? 3),
};
const ratioTarget = 1.05;

/**
 * Ten conditions (each operator of a field, and `text`, counts one), every one true of every
 * task, so that both endpoints are sent every event; through each combinator.
 */
export const tenConditions: TaskFilter = {
  all: [
    { status: { in: ['pending', 'in_progress', 'done', 'cancelled'] } },
    { priority: { gte: 'none', lte: 'urgent' } },
    { not: { labels: { has: 'archived' } } },
    { labels: { has_none: ['spam', 'duplicate'] } },
    { not: { assignee: { eq: 'nobody@example.com' } } },
    { created_at: { gte: '2000-01-01T00:00:00.000Z' } },
    { any: [{ due_on: { is_null: true } }, { due_on: { gte: '2000-01-01' } }] },
    { not: { text: 'zebra' } },
  ],
};

interface Side {
  name: string;
  call: ApiCall;
  tenantId: string;
  path: string;
  /** The events a round copies. */
  templates: Array<Record<string, unknown>>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A tenant with a key, and `bulkTasks` tasks changed once by a bulk update: its events, the templates. */
async function sideOf(
  knex: Knex,
  service: ServerProcess,
  databaseUrl: string,
  name: string,
): Promise<Side> {
  const repositories = createRepositories(knex);
  const { key } = await issueApiKey(repositories, name, ['read', 'write']);
  const { tenant_id: tenantId } = await repositories.tenants.findOrCreate(name);
  const call = apiClient(service.url, key);
  const { projectId } = await projectOfTasks(call, databaseUrl, name, bulkTasks);
  const { requestId } = await call<TaskBulkResult>('POST', '/v1/tasks/bulk-update', {
    filter: { project_id: { in: [projectId] } },
    changes: { assignee: 'erin@example.com', labels_add: ['bulk'] },
  });
  // Numbered, and planned (for no endpoint yet), before the endpoints come.
  while ((await knex('events').where('tenant_id', tenantId).modify(awaitingNumber)).length > 0)
    await sleep(50);
  await sleep(1000);
  const templates = await knex('events')
    .where({ tenant_id: tenantId, type: 'task.updated', request_id: requestId })
    .select('tenant_id', 'type', 'project_id', 'request_id', 'data');
  if (templates.length !== bulkTasks)
    throw new Error(`${name}: the bulk update made ${templates.length} events`);
  return { name, call, tenantId, path: `/planning/filter/${name}`, templates };
}

/** Copies of the side's templates, awaiting their numbers, `settings.events` of them. */
async function writeEvents(knex: Knex, side: Side): Promise<void> {
  const createdAt = nowForDb();
  const rows = Array.from({ length: settings.events }, (_, i) => ({
    ...side.templates[i % side.templates.length],
    event_id: uuidv7(),
    sequence: 0,
    created_at: createdAt,
  }));
  await knex.batchInsert('events', rows, 500);
}

/** One round: the events written, then waited for at the receiver (within `timeoutMs`). */
async function round(knex: Knex, receiver: Receiver, side: Side, timeoutMs: number) {
  const count = async () => (await receiver.byPath()).get(side.path) ?? 0;
  const before = await count();
  await writeEvents(knex, side);
  const deadline = performance.now() + timeoutMs;
  while ((await count()) - before < settings.events) {
    if (performance.now() > deadline)
      throw new Error(`${side.name}: ${(await count()) - before} of ${settings.events} delivered`);
    await sleep(20);
  }
}

const median = (values: number[]) => quantile(values, 0.5);

export async function benchFilterCpu(mysqlUrl: string, receiver: Receiver): Promise<void> {
  const database = await createMysqlDatabase(mysqlUrl, 'tt_bench_planning_filter');
  const databaseUrl = (database.config as { url: string }).url;
  const env = {
    DATABASE_URL: databaseUrl,
    RATE_LIMIT_PER_MINUTE: '999999999',
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  };
  const servers: ServerProcess[] = [];
  try {
    await withKnex(database.config, async (knex) => {
      await migrateToLatest(knex);
      const service = await startServerProcess(serviceArguments(), env);
      servers.push(service);
      const sides = [
        await sideOf(knex, service, databaseUrl, 'without'),
        await sideOf(knex, service, databaseUrl, 'with'),
      ];
      for (const side of sides)
        await side.call(
          'POST',
          '/v1/webhook-endpoints',
          {
            url: receiver.base + side.path,
            event_types: ['task.updated'],
            ...(side.name === 'with' && { filter: tenConditions }),
          },
          201,
        );

      const cpuUs: number[][] = sides.map(() => []);
      for (const side of sides) await round(knex, receiver, side, 60_000);
      for (let r = 0; r < settings.rounds; r++)
        for (const [i, side] of sides.entries()) {
          const before = service.cpuSeconds();
          await round(knex, receiver, side, 60_000);
          cpuUs[i].push(((service.cpuSeconds() - before) * 1e6) / settings.events);
        }
      await servers.pop()!.stop();

      const counted: Instructions[][] = sides.map(() => []);
      if (settings.countedRounds > 0) {
        const { server, count } = await startCountedServer(serviceArguments(), env);
        servers.push(server);
        // Under valgrind a delivery takes some fifty times as long, and more on a busy machine.
        for (const side of sides) await round(knex, receiver, side, 600_000);
        for (let r = 0; r < settings.countedRounds; r++)
          for (const [i, side] of sides.entries())
            counted[i].push(await count(() => round(knex, receiver, side, 600_000)));
      }
      report(cpuUs, counted);
    });
  } finally {
    for (const server of servers) await server.stop();
    await database.drop();
  }
}

/** Instructions per delivery: the median round's outside the collector and compilers, plus theirs over every round. */
function perDelivery(rounds: Instructions[]): number {
  const lumps = rounds.reduce((sum, c) => sum + c.collecting + c.compiling, 0);
  return (
    median(rounds.map((c) => c.running)) / settings.events +
    lumps / (rounds.length * settings.events)
  );
}

function report(cpuUs: number[][], counted: Instructions[][]): void {
  console.log(
    `\n### A webhook endpoint's filter of 10 conditions: the service's work per delivery\n\n` +
      `Two tenants, one endpoint each for \`task.updated\` on the loopback receiver, one with a filter of 10 conditions that every event passes. ` +
      `A round writes ${settings.events.toLocaleString('en')} copies of real events into the events table and lasts until the receiver has them all (numbering, planning, where the filter is read, and delivery); ` +
      'the tenants take turns after a warm-up round each.\n',
  );
  console.log('| measure | without a filter | with | ratio (≤ 1.05) | each round, without; with |');
  console.log('|---|---:|---:|---:|---|');
  if (counted[0].length > 0) {
    const [without, withFilter] = counted.map(perDelivery);
    const ratio = withFilter / without;
    const k = (n: number) => `${fmt(n / 1000)} k`;
    console.log(
      `| instructions per delivery (callgrind; ${counted[0].length} rounds each) | ${k(without)} | ${k(withFilter)} | ${fmt(ratio, 3)} ${mark(ratio <= ratioTarget)} | ` +
        `${counted.map((rounds) => rounds.map((c) => k((c.running + c.collecting + c.compiling) / settings.events)).join(', ')).join('; ')} |`,
    );
  }
  const [without, withFilter] = cpuUs.map(median);
  const ratio = withFilter / without;
  console.log(
    `| CPU µs per delivery (median of ${cpuUs[0].length} rounds each) | ${fmt(without)} | ${fmt(withFilter)} | ${fmt(ratio, 3)} ${mark(ratio <= ratioTarget)} | ` +
      `${cpuUs.map((rounds) => rounds.map((us) => fmt(us)).join(', ')).join('; ')} |`,
  );
}
