/**
 * A CPU profile (`BENCH_CPU_PROF=folder`) by part of the service: the time of each frame goes to
 * the package or folder of its script, and a frame of Node's own (`node:` modules, natives, the
 * garbage collector's samples aside) to the part of its nearest caller that has one, so that a
 * socket write counts for the driver or the HTTP client that made it.
 *
 *   node dist/test/bench/profile-parts.js [--window FROM-TO] [--per N] profile.cpuprofile…
 *
 * `--window` keeps the samples within FROM-TO, microseconds of CLOCK_MONOTONIC (the webhooks bench
 * prints each drain's); `--per N` adds each part's time divided by N (deliveries, say). A profile
 * samples wall time: a thread the kernel has taken the CPU from counts where it stopped, most
 * often in a socket write that woke the database.
 */
import fs from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The parts, first match wins, by the script's URL. */
const parts: Array<[string, RegExp]> = [
  ['undici (the HTTP client)', /node_modules\/undici\//],
  ['mysql2 (the driver and its shims)', /node_modules\/mysql2\/|\/src\/db\/driver\//],
  ['knex (building statements)', /node_modules\/knex\//],
  [
    'signing',
    /\/src\/webhooks\/signer\.js|node_modules\/(standardwebhooks|@stablelib|fast-sha256)\//,
  ],
  ['webhook planning', /\/src\/webhooks\/(webhook-planning-repository|delivery-planning)\.js/],
  ['the delivery worker, its slots and queue', /\/src\/webhooks\//],
  ['the rest of the service', /\/dist\/src\//],
];

function partOf(url: string): string | undefined {
  if (url === '' || url.startsWith('node:')) return undefined;
  return parts.find(([, pattern]) => pattern.test(url))?.[0] ?? 'other packages';
}

/** Milliseconds by part, idle left out. */
function byPart(profile: Profile, window?: [number, number]): Map<string, number> {
  const self = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (window && (at < window[0] || at > window[1])) return;
    self.set(id, (self.get(id) ?? 0) + delta);
  });
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const totals = new Map<string, number>();
  const walk = (node: ProfileNode, inherited: string | undefined) => {
    const { functionName, url } = node.callFrame;
    const part =
      functionName === '(garbage collector)'
        ? 'garbage collection'
        : functionName === '(idle)'
          ? undefined
          : (partOf(url) ?? inherited ?? "Node's own, called by none of these");
    if (part !== undefined)
      totals.set(part, (totals.get(part) ?? 0) + (self.get(node.id) ?? 0) / 1000);
    for (const child of node.children ?? []) walk(nodes.get(child)!, part);
  };
  walk(profile.nodes[0], undefined);
  return totals;
}

const args = process.argv.slice(2);
let window: [number, number] | undefined;
let per: number | undefined;
while (args[0]?.startsWith('--')) {
  const [flag, value] = args.splice(0, 2);
  if (flag === '--window') window = value.split('-').map(Number) as [number, number];
  else if (flag === '--per') per = Number(value);
  else throw new Error(`unknown option ${flag}`);
}
for (const file of args) {
  const totals = byPart(JSON.parse(fs.readFileSync(file, 'utf8')) as Profile, window);
  const all = [...totals.values()].reduce((sum, ms) => sum + ms, 0);
  console.log(`${file}: ${all.toFixed(0)} ms`);
  for (const [part, ms] of [...totals].sort((a, b) => b[1] - a[1]))
    console.log(
      `  ${part.padEnd(42)} ${ms.toFixed(0).padStart(7)} ms ${((100 * ms) / all).toFixed(1).padStart(5)}%` +
        (per ? ` ${((ms * 1000) / per).toFixed(0).padStart(6)} µs each` : ''),
    );
}
