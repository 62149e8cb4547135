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
 * move: the median round's outside V8's major collections and compilers, less what the service
 * runs idle in as long, plus their share. Those two come in lumps in whichever round the order of
 * the rounds puts them (a major collection every second round or so, a tenth of a round's
 * count), and most of the compilers' work follows the major collections: a collection drops
 * the optimised code of functions whose closures died (a closure made at each call), and the
 * next round optimises them again (a collection before every round tripled the compilers'
 * work). Both come in proportion to what the rounds leave in the old generation, so their work
 * over all rounds of all tenants is shared out by that (heaps.ts).
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
import { heapsOf } from './heaps';
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
  const heaps = heapsOf();
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

      const counted: CountedRound[][] = sides.map(() => []);
      // The service's instructions a second idle under callgrind, counted before the rounds.
      let idle: Instructions | undefined;
      if (settings.countedRounds > 0) {
        // Valgrind runs one thread at a time, so a function V8 optimises in the background ran
        // unoptimised for rounds longer than it does beside a free core: a filter's side was
        // still falling in its ninth counted round. Optimised at once, each side is as it settles.
        const { server, count } = await startCountedServer(
          ['--no-concurrent-recompilation', ...heaps.nodeArguments, ...serviceArguments()],
          { ...env, ...heaps.env },
        );
        servers.push(server);
        // Under valgrind a delivery takes some fifty times as long, and more on a busy machine.
        await inTurns(settings.countedWarmup, sides.length, (i) => roundOf(i, 600_000));
        // What the service runs by the clock (its polls, and V8 optimising what they run) is
        // taken off each round for as long as it lasted: idle, it ran 6.9 M instructions a
        // second at valgrind's pace outside the collector and compilers, and its compilers
        // 8 M more, so a round of 15 to 20 s held 250 k of it a delivery, filter or not.
        await sleep(2000);
        const idleCount = await count(() => sleep(settings.countedIdleSeconds * 1000));
        idle = perSecond(idleCount);
        await inTurns(settings.countedRounds, sides.length, async (i) => {
          const before = await heaps.read();
          const round = await count(() => roundOf(i, 600_000));
          const after = await heaps.read();
          counted[i].push({
            ...lessIdle(round, idle!),
            grownBytes: after.oldBytes - before.oldBytes + after.freedBytes,
            majors: after.majors,
          });
        });
      }
      report(sides, cpuUs, counted, idle);
    });
  } finally {
    for (const server of servers) await server.stop();
    heaps.remove();
    await database.drop();
  }
}

/** A counted round, less what the service runs idle in as long, and what it left in the old generation. */
interface CountedRound extends Instructions {
  grownBytes: number;
  majors: number;
}

/** The scavenger's part of the collector's work (the rest is major collections'). */
const minor = (counted: Instructions) => counted.collecting - counted.majorCollecting;

function perSecond(idle: Instructions): Instructions {
  const rate = (n: number) => n / idle.seconds;
  return {
    running: rate(idle.running),
    collecting: rate(idle.collecting),
    majorCollecting: rate(idle.majorCollecting),
    compiling: rate(idle.compiling),
    seconds: 1,
  };
}

/** A round less the idle service's work in as long; major collections are shared out instead. */
function lessIdle(round: Instructions, idle: Instructions): Instructions {
  const less = (n: number, idleRate: number) => n - idleRate * round.seconds;
  return {
    running: less(round.running, idle.running),
    collecting: less(minor(round), minor(idle)) + round.majorCollecting,
    majorCollecting: round.majorCollecting,
    compiling: less(round.compiling, idle.compiling),
    seconds: round.seconds,
  };
}

/** A round's own instructions: outside the compilers and major collections, which are shared out. */
const own = (round: Instructions) => round.running + minor(round);
/** What is shared out by the old generation's growth. */
const lumps = (round: Instructions) => round.compiling + round.majorCollecting;

function report(
  sides: Side[],
  cpuUs: number[][],
  counted: CountedRound[][],
  idle: Instructions | undefined,
): void {
  const k = (n: number) => `${fmt(n / 1000)} k`;
  const each = settings.events;
  const rounds = counted.flat();
  const lumpsPerByte =
    rounds.reduce((sum, round) => sum + lumps(round), 0) /
    rounds.reduce((sum, round) => sum + round.grownBytes, 0);
  const grown = counted.map(
    (side) => side.reduce((sum, round) => sum + round.grownBytes, 0) / (side.length * each),
  );
  const owned = counted.map((side) => median(side.map(own)) / each);
  const shared = grown.map((bytes) => lumpsPerByte * bytes);
  const instructions = owned.map((n, i) => n + shared[i]);
  console.log(
    `\n### A webhook endpoint's filter of 10 conditions: the service's work per delivery\n\n` +
      `One tenant for each filter, with one endpoint for \`task.updated\` on the loopback receiver; every event passes every filter. ` +
      `A round writes ${each.toLocaleString('en')} copies of real events into the events table and lasts until the receiver has them all (numbering, planning, where the filter is read, and delivery); ` +
      `the tenants take turns (each round starting one further on) after warm-up rounds of each (${settings.warmup} timed, ${settings.countedWarmup} under callgrind). ` +
      (idle
        ? `Instructions counted by valgrind's callgrind (${counted[0].length} rounds each): the median round's own (outside V8's compilers and major collections), less what the service runs idle in as long (${k(idle.running)} a second, its compilers ${k(idle.compiling)} and scavenger ${k(minor(idle))} more, counted for ${settings.countedIdleSeconds} s before the rounds), ` +
          `plus a share of the compilers' and major collections' work over all rounds of all tenants (${k(lumpsPerByte * 1000)} a kB), by what each tenant's rounds left in the old generation. `
        : '') +
      `CPU time: the median of ${cpuUs[0].length} rounds each.\n`,
  );
  const cpu = cpuUs.map(median);
  const ratio = (values: number[], i: number) =>
    i === 0 ? '' : `${fmt(values[i] / values[0], 3)} ${mark(values[i] / values[0] <= ratioTarget)}`;
  console.log(
    `| filter | instructions per delivery | ratio to none (≤ ${ratioTarget}) | the median round's own | its ratio | compilers and major collections, shared | old generation grown a delivery | its ratio | major collections in the rounds | CPU µs per delivery | ratio to none (≤ ${ratioTarget}) | each round's own | each round's compilers / major collections | CPU µs, each round |`,
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|');
  const plain = (values: number[], i: number) => (i === 0 ? '' : fmt(values[i] / values[0], 3));
  for (const [i, side] of sides.entries()) {
    const sideRounds = counted[i];
    console.log(
      (idle
        ? `| ${side.name} | ${k(instructions[i])} | ${ratio(instructions, i)} | ${k(owned[i])} | ${plain(owned, i)} | ${k(shared[i])} | ` +
          `${fmt(grown[i])} B | ${plain(grown, i)} | ${sideRounds.reduce((sum, round) => sum + round.majors, 0)} | `
        : `| ${side.name} | not counted | | | | | | | | `) +
        `${fmt(cpu[i])} | ${ratio(cpu, i)} | ` +
        (idle
          ? `${sideRounds.map((round) => k(own(round) / each)).join(', ')} | ${sideRounds.map((round) => `${k(round.compiling / each)} / ${k(round.majorCollecting / each)}`).join(', ')} | `
          : '| | ') +
        `${cpuUs[i].map((us) => fmt(us)).join(', ')} |`,
    );
  }
}
