/**
 * What a webhook subscription's filter costs an event, alone and exactly: the planning's own
 * work for it (the event's data parsed, the filter's predicate asked of the task) counted in
 * instructions by valgrind's callgrind, in a process that does nothing else. planning-filter-cpu.ts
 * measures the whole service per delivery, whose rounds move by more than the 5 % issue 46
 * allows the filter (V8 compiling and collecting in lumps, the service's timers, the claims);
 * this part tells what the filter's code itself adds, to be read against that delivery.
 *
 * Each measure runs twice under callgrind, with no events and with `rounds` times 1,000
 * `task.updated` events of the planning bench's shape (the data of a bulk update's event, each
 * with a task id of its own, as read from the database), and takes the difference per event:
 * start-up, loading and the loop's making cancel out. The filters are the planning bench's.
 *
 *   node dist/test/bench/planning-filter-events.js [rounds, 100]
 */
import { spawnSync } from 'node:child_process';
import { subscriptionOf, taskEventsFor } from '../../src/webhooks/subscriptions';
import { filters } from './planning-filter-cpu';
import { fmt } from './report';

/** A `task.updated` of the bulk update in planning-filter-cpu.ts, as stored (518 characters). */
const sample = {
  object: {
    task_id: '01a243bd-e0ad-7000-8000-000000000000',
    project_id: '01a243bd-e473-7505-abb5-b7a89f8e0d78',
    title: 'Lehuba noravo gomiba',
    description: 'sebahu wunora gimide gilura lefiti lepulu mibami lecera.',
    status: 'pending',
    created_at: '2026-12-05T01:07:27.021Z',
    updated_at: '2026-12-05T01:07:28.875Z',
    completed_at: null,
    priority: 'high',
    due_on: '2026-12-12',
    labels: ['bulk'],
    assignee: 'erin@example.com',
  },
  previous: { updated_at: '2026-12-06T02:33:33.553Z', labels: [], assignee: 'ana@example.com' },
};

/** In the counted process: `rounds` times the 1,000 events, through `measure`. */
function run(measure: string, rounds: number): void {
  const data = Array.from({ length: 1000 }, (_, i) =>
    JSON.stringify({ ...sample, object: { ...sample.object, task_id: `${i}` } }),
  );
  const filter = filters.find((one) => one.name === measure)?.filter;
  const subscription = filter && subscriptionOf(JSON.stringify(filter), null)!;
  const taskEventOf = taskEventsFor([subscription]);
  for (let round = 0; round < rounds; round++)
    for (const one of data) {
      if (subscription === undefined) JSON.parse(one);
      else if (!subscription.wants(taskEventOf('task.updated', one)!))
        throw new Error(`${measure}: an event every filter passes was not wanted`);
    }
}

/** The instructions the process ran with `rounds`, by callgrind's total. */
function counted(measure: string, rounds: number): number {
  const result = spawnSync(
    'valgrind',
    [
      '--tool=callgrind',
      '--callgrind-out-file=/dev/null',
      process.execPath,
      // Valgrind runs one thread at a time: V8's optimising in the background lagged its use.
      '--no-concurrent-recompilation',
      __filename,
      'run',
      measure,
      `${rounds}`,
    ],
    { encoding: 'utf8', maxBuffer: 1 << 24 },
  );
  const total = /Collected : (\d+)/.exec(result.stderr);
  if (result.status !== 0 || total === null)
    throw new Error(`callgrind of ${measure}: ${result.stderr.slice(-2000)}`);
  return Number(total[1]);
}

function main(): void {
  const rounds = Number(process.argv[2] ?? 100);
  console.log(
    `\n### A webhook filter's own work per event (in a process of its own, callgrind, ${rounds * 1000} events less none)\n`,
  );
  console.log('| measure | instructions per event |');
  console.log('|---|---:|');
  const measures = [
    'the JSON.parse of the data alone',
    ...filters.flatMap((one) => (one.filter ? [one.name] : [])),
  ];
  for (const measure of measures) {
    const each = (counted(measure, rounds) - counted(measure, 0)) / (rounds * 1000);
    console.log(`| ${measure} | ${fmt(each / 1000, 1)} k |`);
  }
}

if (process.argv[2] === 'run') run(process.argv[3], Number(process.argv[4]));
else main();
