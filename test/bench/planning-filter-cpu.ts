/**
 * The planning bench's webhook filter: what an endpoint's `filter` of 10 conditions adds to the
 * service's work per delivery (issue 46: under 5 %). Three tenants on a database of their own,
 * each with one endpoint on the loopback receiver: one without a filter, one with 10 conditions
 * on the task's fields, one with 9 of them and `text` (which folds the task's words); every event
 * passes both filters. A round writes copies of 1,000 real `task.updated` events (made by a bulk
 * update of the tenant's tasks) straight into the events table, as another instance would, and
 * lasts until the receiver has them all: the service numbers them, plans their deliveries (where the filter is
 * read) and delivers them. Rounds take the tenants in turn after a warm-up round each.
 *
 * Measured twice: the service's CPU time per delivery (the median round), and its instructions
 * per delivery counted by valgrind's callgrind (callgrind.ts), which the machine's load does not
 * move: the median round's outside V8's collector and compilers, plus theirs over all rounds.
 *
 * BENCH_PLANNING_FILTER_EVENTS (1000 per round), BENCH_PLANNING_FILTER_WARMUP (3 rounds of each
 * before the timed ones), BENCH_PLANNING_FILTER_ROUNDS (9 of each, timed),
 * BENCH_PLANNING_COUNTED_WARMUP (6 rounds of each before the counted ones),
 * BENCH_PLANNING_COUNTED_ROUNDS (9 of each under callgrind; 0 leaves callgrind out),
 * BENCH_PLANNING_COUNTED_IDLE_SECONDS (30: the service counted idle, taken off the rounds). Under
 * callgrind one warm-up round was not enough: V8 was still compiling (half the instructions
 * counted) and the rest of a round fell from 616 k to 430 k a delivery over the next three. After
 * three, a filter's side still fell for five more (510 k to 440 k: its parse and predicates
 * were still being optimised) while the side without one had settled, and 5 counted rounds moved
 * its median by 20 k either way.
 */
import type { Knex } from 'knex';
import { v7 as uuidv7 } from 'uuid';
import type { components } from '../../generated/api';
import { issueApiKey } from '../../src/cli/issue-api-key';
import { createRepositories } from '../../src/all-repositories';
import type { TaskFilter } from '../../src/db/task-filter';
import { awaitingNumber } from '../../src/db/event-log';
import { migrateToLatest } from '../../src/db/migrate';
import { nowForDb } from '../../src/db/timestamps';
import { createMysqlDatabase } from '../support/mysql-database';
import { apiClient, type ApiCall } from './api-client';
import { startCountedServer, type Instructions } from './callgrind';
import { withKnex } from './fixture';
import { bulkTasks, projectOfTasks } from './planning-bulk';
import { serviceArguments, startServerProcess, type ServerProcess } from './processes';
import type { Receiver } from './receiver';
import { fmt, mark, quantile } from './report';

type TaskBulkResult = components['schemas']['TaskBulkResult'];

const settings = {
  events: Number(process.env.BENCH_PLANNING_FILTER_EVENTS ?? 1000),
  warmup: Number(process.env.BENCH_PLANNING_FILTER_WARMUP ?? 3),
  rounds: Number(process.env.BENCH_PLANNING_FILTER_ROUNDS ?? 9),
  countedWarmup: Number(process.env.BENCH_PLANNING_COUNTED_WARMUP ?? 6),
  countedRounds: Number(process.env.BENCH_PLANNING_COUNTED_ROUNDS ?? 9),
  countedIdleSeconds: Number(process.env.BENCH_PLANNING_COUNTED_IDLE_SECONDS ?? 30),
};

const ratioTarget = 1.05;

/**
 * Ten conditions (each operator of a field counts one, as does `text`), every one true of every
 * task, so that every endpoint is sent every event; through each combinator.
 */
const fieldConditions: TaskFilter[] = [
  { status: { in: ['pending', 'in_progress', 'done', 'cancelled'] } },
  { priority: { gte: 'none', lte: 'urgent' } },
  { not: { labels: { has: 'archived' } } },
  { labels: { has_none: ['spam', 'duplicate'] } },
  { not: { assignee: { eq: 'nobody@example.com' } } },
  { created_at: { gte: '2000-01-01T00:00:00.000Z' } },
  { any: [{ due_on: { is_null: true } }, { due_on: { gte: '2000-01-01' } }] },
];
export const filters: Array<{ name: string; filter?: TaskFilter }> = [
  { name: 'none' },
  {
    name: '10 conditions on fields',
    filter: { all: [...fieldConditions, { updated_at: { lt: '2100-01-01T00:00:00.000Z' } }] },
  },
  {
    name: '9 on fields and `text`',
    filter: { all: [...fieldConditions, { not: { text: 'zebra' } }] },
  },
];

interface Side {
  name: string;
  filter?: TaskFilter;
  call: ApiCall;
  tenantId: string;
  path: string;
  /** The events a round copies. */
  templates: Array<Record<string, unknown>>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A tenant with a key and `bulkTasks` tasks changed once by a bulk update, whose events are the
 * templates; then its endpoint, after those events are planned (for no endpoint).
 */
async function sideOf(
  knex: Knex,
  service: ServerProcess,
  receiver: Receiver,
  databaseUrl: string,
  side: { name: string; filter?: TaskFilter; n: number },
): Promise<Side> {
  const repositories = createRepositories(knex);
  const tenant = `filter bench ${side.n}`;
  const { key } = await issueApiKey(repositories, tenant, ['read', 'write']);
  const { tenant_id: tenantId } = await repositories.tenants.findOrCreate(tenant);
  const call = apiClient(service.url, key);
  const { projectId } = await projectOfTasks(
    call,
    { url: databaseUrl, tenantId },
    tenant,
    bulkTasks,
  );
  const { requestId } = await call<TaskBulkResult>('POST', '/v1/tasks/bulk-update', {
    filter: { project_id: { in: [projectId] } },
    changes: { assignee: 'erin@example.com', labels_add: ['bulk'] },
  });
  while ((await knex('events').where('tenant_id', tenantId).modify(awaitingNumber)).length > 0)
    await sleep(50);
  // Planning follows numbering at once; a second is ample.
  await sleep(1000);
  const templates = await knex('events')
    .where({ tenant_id: tenantId, type: 'task.updated', request_id: requestId })
    .select('tenant_id', 'type', 'project_id', 'request_id', 'data');
  if (templates.length !== bulkTasks)
    throw new Error(`${tenant}: the bulk update made ${templates.length} events`);
  const path = `/planning/filter/${side.n}`;
  await call(
    'POST',
    '/v1/webhook-endpoints',
    {
      url: receiver.base + path,
      event_types: ['task.updated'],
      ...(side.filter && { filter: side.filter }),
    },
    201,
  );
  return { ...side, call, tenantId, path, templates };
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

/** Rounds of every side, each round starting one side further on, so that none always follows the same one. */
async function inTurns(rounds: number, sides: number, each: (side: number) => Promise<void>) {
  for (let r = 0; r < rounds; r++) for (let k = 0; k < sides; k++) await each((r + k) % sides);
}

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
      const sides: Side[] = [];
      for (const [n, filter] of filters.entries())
        sides.push(await sideOf(knex, service, receiver, databaseUrl, { ...filter, n }));

      const roundOf = (i: number, timeoutMs: number) => round(knex, receiver, sides[i], timeoutMs);
      const cpuUs: number[][] = sides.map(() => []);
      await inTurns(settings.warmup, sides.length, (i) => roundOf(i, 60_000));
      await inTurns(settings.rounds, sides.length, async (i) => {
        const before = service.cpuSeconds();
        await roundOf(i, 60_000);
        cpuUs[i].push(((service.cpuSeconds() - before) * 1e6) / settings.events);
      });
      await service.stop();
      servers.splice(0);

      const counted: Instructions[][] = sides.map(() => []);
      // The service's instructions a second idle under callgrind, counted before the rounds.
      let idlePerSecond = 0;
      if (settings.countedRounds > 0) {
        // Valgrind runs one thread at a time, so a function V8 optimises in the background ran
        // unoptimised for rounds longer than it does beside a free core: a filter's side was
        // still falling in its ninth counted round. Optimised at once, each side is as it settles.
        const { server, count } = await startCountedServer(
          ['--no-concurrent-recompilation', ...serviceArguments()],
          env,
        );
        servers.push(server);
        // Under valgrind a delivery takes some fifty times as long, and more on a busy machine.
        await inTurns(settings.countedWarmup, sides.length, (i) => roundOf(i, 600_000));
        // What the service runs by the clock (its polls) is taken off each round for as long as
        // it lasted: idle, it ran 6.9 M instructions a second at valgrind's pace, so a round of
        // 15 to 20 s held 100 to 140 k of it a delivery, more in a longer round, filter or not.
        await sleep(2000);
        const idle = await count(() => sleep(settings.countedIdleSeconds * 1000));
        idlePerSecond = idle.running / idle.seconds;
        await inTurns(settings.countedRounds, sides.length, async (i) => {
          const round = await count(() => roundOf(i, 600_000));
          counted[i].push({ ...round, running: round.running - idlePerSecond * round.seconds });
        });
      }
      report(sides, cpuUs, counted, idlePerSecond);
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

function report(
  sides: Side[],
  cpuUs: number[][],
  counted: Instructions[][],
  idlePerSecond: number,
): void {
  const k = (n: number) => `${fmt(n / 1000)} k`;
  console.log(
    `\n### A webhook endpoint's filter of 10 conditions: the service's work per delivery\n\n` +
      `One tenant for each filter, with one endpoint for \`task.updated\` on the loopback receiver; every event passes every filter. ` +
      `A round writes ${settings.events.toLocaleString('en')} copies of real events into the events table and lasts until the receiver has them all (numbering, planning, where the filter is read, and delivery); ` +
      `the tenants take turns (each round starting one further on) after warm-up rounds of each (${settings.warmup} timed, ${settings.countedWarmup} under callgrind). ` +
      (counted[0].length > 0
        ? `Instructions counted by valgrind's callgrind (${counted[0].length} rounds each): the median round's outside V8's collector and compilers, less what the service runs idle in as long (${k(idlePerSecond)} a second, counted for ${settings.countedIdleSeconds} s before the rounds), plus the collector's and compilers' over all rounds. `
        : '') +
      `CPU time: the median of ${cpuUs[0].length} rounds each.\n`,
  );
  const instructions = counted[0].length > 0 ? counted.map(perDelivery) : undefined;
  // The median round's instructions outside the collector and compilers alone: steadier than
  // the whole, as a major collection falls in one round or another.
  const rest = counted.map((rounds) => median(rounds.map((c) => c.running)) / settings.events);
  const cpu = cpuUs.map(median);
  const ratio = (values: number[], i: number) =>
    i === 0 ? '' : `${fmt(values[i] / values[0], 3)} ${mark(values[i] / values[0] <= ratioTarget)}`;
  console.log(
    `| filter | instructions per delivery | ratio to none (≤ ${ratioTarget}) | the collector / the compilers, over all rounds | the rest, each round | the rest's ratio to none | CPU µs per delivery | ratio to none (≤ ${ratioTarget}) | CPU µs, each round |`,
  );
  console.log('|---|---:|---:|---:|---|---:|---:|---:|---|');
  for (const [i, side] of sides.entries()) {
    const rounds = counted[i];
    const each = (part: 'collecting' | 'compiling') =>
      k(rounds.reduce((sum, c) => sum + c[part], 0) / (rounds.length * settings.events));
    console.log(
      (instructions
        ? `| ${side.name} | ${k(instructions[i])} | ${ratio(instructions, i)} | ${each('collecting')} / ${each('compiling')} | ` +
          `${rounds.map((c) => k(c.running / settings.events)).join(', ')} | ${i === 0 ? '' : fmt(rest[i] / rest[0], 3)} | `
        : `| ${side.name} | not counted | | | | | `) +
        `${fmt(cpu[i])} | ${ratio(cpu, i)} | ${cpuUs[i].map((us) => fmt(us)).join(', ')} |`,
    );
  }
}
