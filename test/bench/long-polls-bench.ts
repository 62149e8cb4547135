/**
 * `make bench`, abuse part (c): as many long polls as the limits allow (LONG_POLLS_PER_KEY on
 * each of a tenant's keys, up to LONG_POLLS_PER_TENANT, for several tenants), each asking again
 * from its answer's cursor, while those tenants write: another tenant's requests must stay
 * quick, and MariaDB's reads (Com_select) within 2x of the same run without the polls. The runs
 * alternate without and with polls, so drift hits both.
 */
import { setMaxListeners } from 'node:events';
import http from 'node:http';
import type { Knex } from 'knex';
import { issueApiKey } from '../../src/cli/issue-api-key';
import { createRepositories } from '../../src/all-repositories';
import type { ServerProcess } from './processes';
import { fmt, mark } from './report';

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
/** The cursor before the first event. */
const emptyCursor = Buffer.from(JSON.stringify({ after: 0 })).toString('base64url');
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface LongPollOptions {
  seconds: number;
  rounds: number;
  tenants: number;
  perKey: number;
  perTenant: number;
  writesPerSecond: number;
}

async function selectsSoFar(knex: Knex): Promise<number> {
  const [rows] = await knex.raw("show global status like 'Com_select'");
  return Number(rows[0].Value);
}

/** A GET's JSON body, over the agent's connections. */
function getJson(
  url: string,
  key: string,
  agent: http.Agent,
  signal: AbortSignal,
): Promise<{ next_cursor?: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      url,
      { agent, signal, headers: { Authorization: `Bearer ${key}` } },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve(JSON.parse(body)));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
  });
}

/** Keeps `count` long polls of the key going, each asking again from its answer's cursor, until stopped. */
function keepPolling(
  url: string,
  key: string,
  from: string,
  count: number,
  agent: http.Agent,
  signal: AbortSignal,
  sent: { count: number },
): Promise<unknown> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      let cursor = from;
      while (!signal.aborted) {
        try {
          sent.count++;
          const page = await getJson(
            `${url}/v1/events?wait=30&cursor=${cursor}`,
            key,
            agent,
            signal,
          );
          cursor = page.next_cursor ?? cursor;
        } catch {
          // Aborted at the end of the run.
        }
      }
    }),
  );
}

/** One run: writes spread over the polled tenants, another tenant's reads timed; polls or none. */
async function run(
  service: ServerProcess,
  knex: Knex,
  keys: { polled: string[][]; other: string },
  options: LongPollOptions,
  withPolls: boolean,
) {
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  const sent = { count: 0 };
  // Each tenant's polls come from an address of their own (127.0.0.11, .12, ...), as separate clients' would.
  const agents = keys.polled.map(
    (_, t) => new http.Agent({ keepAlive: true, localAddress: `127.0.0.${11 + t}` }),
  );
  // Consumers that follow from now: each tenant's end of the feed first.
  const ends = await Promise.all(
    keys.polled.map(
      async ([key]) =>
        (
          await getJson(
            `${service.url}/v1/events?limit=200&cursor=${emptyCursor}`,
            key,
            agents[0],
            stop.signal,
          )
        ).next_cursor!,
    ),
  );
  const polling = withPolls
    ? keys.polled.flatMap((tenantKeys, t) =>
        tenantKeys.map((key, i) =>
          keepPolling(
            service.url,
            key,
            ends[t],
            Math.min(options.perKey, options.perTenant - i * options.perKey),
            agents[t],
            stop.signal,
            sent,
          ),
        ),
      )
    : [];
  // Every poll's first request (a read of its own) made before measuring, and a moment more.
  const polls = options.tenants * options.perTenant;
  while (withPolls && sent.count < polls) await pause(50);
  if (withPolls) await pause(1000);
  const before = await selectsSoFar(knex);
  const sentBefore = sent.count;
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  const writes = (async () => {
    for (let n = 0; performance.now() < deadline; n++) {
      const tenantKeys = keys.polled[n % keys.polled.length];
      await fetch(`${service.url}/v1/projects`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${tenantKeys[0]}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: `write ${n}` }),
      }).then((r) => r.arrayBuffer());
      await pause(1000 / options.writesPerSecond);
    }
  })();
  const times: number[] = [];
  while (performance.now() < deadline) {
    const at = performance.now();
    const response = await fetch(`${service.url}/v1/projects?limit=10`, {
      headers: { Authorization: `Bearer ${keys.other}` },
    });
    await response.arrayBuffer();
    if (response.status === 200) times.push(performance.now() - at);
    await pause(25);
  }
  await writes;
  const seconds = (performance.now() - started) / 1000;
  const readsPerSecond = ((await selectsSoFar(knex)) - before) / seconds;
  const pollsPerSecond = (sent.count - sentBefore) / seconds;
  stop.abort();
  await Promise.all(polling);
  for (const agent of agents) agent.destroy();
  times.sort((a, b) => a - b);
  return { readsPerSecond, pollsPerSecond, p99: percentile(times, 99) };
}

export async function longPollsWithWrites(
  service: ServerProcess,
  knex: Knex,
  options: LongPollOptions,
): Promise<void> {
  const repositories = createRepositories(knex);
  const polled: string[][] = [];
  const keysPerTenant = Math.ceil(options.perTenant / options.perKey);
  for (let t = 0; t < options.tenants; t++) {
    const tenantKeys: string[] = [];
    for (let k = 0; k < keysPerTenant; k++)
      tenantKeys.push((await issueApiKey(repositories, `polled-${t}`, ['read', 'write'])).key);
    polled.push(tenantKeys);
  }
  const other = (await issueApiKey(repositories, 'bystander', ['read', 'write'])).key;
  type Run = Awaited<ReturnType<typeof run>>;
  const results = { without: [] as Run[], with: [] as Run[] };
  for (let round = 0; round < options.rounds; round++) {
    results.without.push(await run(service, knex, { polled, other }, options, false));
    results.with.push(await run(service, knex, { polled, other }, options, true));
  }
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const reads = {
    without: mean(results.without.map((r) => r.readsPerSecond)),
    with: mean(results.with.map((r) => r.readsPerSecond)),
  };
  const p99 = {
    without: Math.max(...results.without.map((r) => r.p99)),
    with: Math.max(...results.with.map((r) => r.p99)),
  };
  const ratio = reads.with / reads.without;
  const pollsPerSecond = mean(results.with.map((r) => r.pollsPerSecond));
  const polls = options.tenants * options.perTenant;
  console.log(
    `\n## (c) ${polls} long polls held (${options.tenants} tenants × ${options.perTenant}, ${options.perKey} a key), re-asking on each answer, with ${options.writesPerSecond} writes/s; ${options.rounds} rounds of ${options.seconds} s without and with them\n`,
  );
  console.log(
    `- MariaDB reads (Com_select) ${fmt(reads.with)}/s against ${fmt(reads.without)}/s without polls: ${fmt(ratio, 2)}× (≤ 2: ${mark(ratio <= 2)})`,
  );
  // Each poll's key is read anew (a revoked key is refused at once), in lookups that go together when polls ask at once.
  console.log(
    `- the polls asked ${fmt(pollsPerSecond)} times a second: ${fmt((reads.with - reads.without) / pollsPerSecond, 2)} reads more a poll`,
  );
  console.log(
    `- another tenant's list, p99 ${fmt(p99.with, 1)} ms with the polls (< 50: ${mark(p99.with < 50)}), ${fmt(p99.without, 1)} ms without`,
  );
}
