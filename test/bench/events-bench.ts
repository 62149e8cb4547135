/**
 * `make bench`, events part: what recording events costs the writes, against the service as it
 * was before events (commit BENCH_BEFORE_EVENTS, built beside this one in a temporary worktree),
 * in one run, alternating rounds; and the numbering lag, from a create's 2xx to its event being
 * read by a long-polling consumer, at the peak write rate.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hashApiKey, generateApiKey } from '../../src/api-key-format';
import { projectRoot } from '../../src/paths';
import { createMysqlDatabase } from '../support/mysql-database';
import { seedFixture, taskRows, withKnex, operations, type Fixture } from './fixture';
import { drive, type Operation } from './load';
import mysql from 'mysql2/promise';
import {
  cpuSecondsOf,
  serviceArguments,
  startServerProcess,
  type ServerProcess,
} from './processes';
import { fmt, mark } from './report';

const mysqlUrl = process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';
/** The last commit before events were recorded: the service as BENCHMARKS.md measured it. */
const beforeEvents = process.env.BENCH_BEFORE_EVENTS ?? '31a16e3';
// Short rounds, many of them: this shared machine's speed drifts over seconds, and rounds that
// alternate often see the same drift (3 rounds of 5 s kept 0.98 of creates, then 0.79, for one
// build; 8 rounds of 3 s, 0.87 to 0.89 in four runs).
const load = {
  connections: Number(process.env.BENCH_CONNECTIONS ?? 16),
  seconds: Number(process.env.BENCH_SECONDS ?? 3),
};
const rounds = Number(process.env.BENCH_ROUNDS ?? 8);
const serviceEnv = { RATE_LIMIT_PER_MINUTE: '999999999', LOG_LEVEL: 'info' };

/** The older commit, built in a worktree of its own that shares this one's node_modules. */
function buildBefore(): { root: string; remove(): void } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-before-events-'));
  execFileSync('git', ['worktree', 'add', '--detach', root, beforeEvents], {
    cwd: projectRoot,
    stdio: 'ignore',
  });
  fs.symlinkSync(path.join(projectRoot, 'node_modules'), path.join(root, 'node_modules'));
  execFileSync(
    process.execPath,
    [path.join(projectRoot, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    { cwd: root, stdio: 'inherit' },
  );
  return {
    root,
    remove: () =>
      execFileSync('git', ['worktree', 'remove', '--force', root], {
        cwd: projectRoot,
        stdio: 'ignore',
      }),
  };
}

/**
 * The fixture on a database the older service has migrated itself (its schema, without events),
 * written row by row as the current fixture's are.
 */
async function seedBefore(
  databaseUrl: string,
  root: string,
): Promise<{ fixture: Fixture; service: ServerProcess }> {
  const args = serviceArguments().map((arg) => arg.replace(projectRoot, root));
  const service = await startServerProcess(args, { ...serviceEnv, DATABASE_URL: databaseUrl });
  const fixture = await withKnex({ client: 'mysql', url: databaseUrl }, async (knex) => {
    const key = generateApiKey();
    const tenantId = 'b0000000-0000-7000-8000-000000000001';
    const now = '2026-01-01 00:00:00.000';
    await knex('tenants').insert({ tenant_id: tenantId, name: 'bench', created_at: now });
    await knex('api_keys').insert({
      key_id: 'b0000000-0000-7000-8000-000000000002',
      tenant_id: tenantId,
      key_hash: hashApiKey(key),
      scopes: 'read,write',
      created_at: now,
    });
    const [listedProjectId, emptyProjectId] = [
      'b0000000-0000-7000-8000-000000000003',
      'b0000000-0000-7000-8000-000000000004',
    ];
    for (const projectId of [listedProjectId, emptyProjectId]) {
      await knex('projects').insert({
        project_id: projectId,
        tenant_id: tenantId,
        name: 'p',
        description: '',
        created_at: now,
        updated_at: now,
        version: 1,
      });
    }
    const rows = taskRows(listedProjectId, 1000);
    await knex.batchInsert('tasks', rows, 400);
    return { key, listedProjectId, emptyProjectId, taskIds: rows.map((row) => row.task_id) };
  });
  return { fixture, service };
}

/** The MySQL server's process, when it runs on this machine (its pid file readable here); undefined otherwise. */
async function mysqlServerPid(): Promise<number | undefined> {
  const connection = await mysql.createConnection(mysqlUrl);
  try {
    const [rows] = await connection.query('SELECT @@pid_file AS pidFile');
    return Number(fs.readFileSync((rows as Array<{ pidFile: string }>)[0].pidFile, 'utf8').trim());
  } catch {
    return undefined;
  } finally {
    await connection.end();
  }
}

async function costOfEvents(): Promise<void> {
  const databasePid = await mysqlServerPid();
  const databaseCpu = () => (databasePid === undefined ? NaN : cpuSecondsOf(databasePid));
  const before = buildBefore();
  const [oldDatabase, newDatabase] = [
    await createMysqlDatabase(mysqlUrl, 'tt_bench_before'),
    await createMysqlDatabase(mysqlUrl, 'tt_bench_events'),
  ];
  try {
    const old = await seedBefore((oldDatabase.config as { url: string }).url, before.root);
    const fixture = await withKnex(newDatabase.config, (knex) => seedFixture(knex, 1000));
    const current = await startServerProcess(serviceArguments(), {
      ...serviceEnv,
      DATABASE_URL: (newDatabase.config as { url: string }).url,
    });
    try {
      console.log(
        `\n## MariaDB: the cost of events (this service against ${beforeEvents}, before events, in alternating rounds)\n`,
      );
      console.log(
        '| operation | before req/s | with events req/s | throughput kept (≥ 0.85) | service CPU µs per request, before / with events | MariaDB CPU µs per request, before / with events |',
      );
      console.log('|---|---:|---:|---:|---:|---:|');
      const pick = (ops: Operation[], name: string) => ops.find((op) => op.name === name)!;
      for (const name of ['createTask', 'updateTask']) {
        const targets = [
          {
            server: old.service,
            key: old.fixture.key,
            operation: pick(operations(old.fixture), name),
            requests: 0,
            seconds: 0,
            cpu: 0,
            databaseCpu: 0,
          },
          {
            server: current,
            key: fixture.key,
            operation: pick(operations(fixture), name),
            requests: 0,
            seconds: 0,
            cpu: 0,
            databaseCpu: 0,
          },
        ];
        for (const t of targets)
          await drive(t.server.url, t.key, t.operation, { ...load, seconds: 3 });
        for (let round = 0; round < rounds; round++) {
          for (const t of targets) {
            const [cpuBefore, databaseCpuBefore] = [t.server.cpuSeconds(), databaseCpu()];
            const result = await drive(t.server.url, t.key, t.operation, load);
            t.cpu += t.server.cpuSeconds() - cpuBefore;
            t.databaseCpu += databaseCpu() - databaseCpuBefore;
            t.requests += result.requests;
            t.seconds += result.requests / result.requestsPerSecond;
          }
        }
        const [was, now] = targets.map((t) => ({
          rate: t.requests / t.seconds,
          cpuUs: (t.cpu * 1e6) / t.requests,
          databaseCpuUs: (t.databaseCpu * 1e6) / t.requests,
        }));
        const kept = now.rate / was.rate;
        console.log(
          `| ${name} | ${fmt(was.rate)} | ${fmt(now.rate)} | ${fmt(kept, 2)} ${mark(kept >= 0.85)} | ${fmt(was.cpuUs)} / ${fmt(now.cpuUs)} | ${fmt(was.databaseCpuUs)} / ${fmt(now.databaseCpuUs)} |`,
        );
      }
      await numberingLag(current.url, fixture);
    } finally {
      await old.service.stop();
      await current.stop();
    }
  } finally {
    await oldDatabase.drop();
    await newDatabase.drop();
    before.remove();
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/**
 * Writers create tasks as fast as the service answers for `load.seconds`, noting when each 2xx
 * came; a consumer long-polls the feed and notes when it reads each task's event.
 */
async function numberingLag(url: string, fixture: Fixture): Promise<void> {
  const headers = { Authorization: `Bearer ${fixture.key}`, 'Content-Type': 'application/json' };
  const acknowledgedAt = new Map<string, number>();
  const readAt = new Map<string, number>();
  let cursor = (
    (await (await fetch(`${url}/v1/events?limit=1&type=project.deleted`, { headers })).json()) as {
      next_cursor: string;
    }
  ).next_cursor;
  let writing = true;
  const consumer = (async () => {
    while (writing || readAt.size < acknowledgedAt.size) {
      const page = (await (
        await fetch(`${url}/v1/events?limit=200&wait=1&type=task.created&cursor=${cursor}`, {
          headers,
        })
      ).json()) as { data: Array<{ data: { object: { task_id: string } } }>; next_cursor: string };
      const now = performance.now();
      for (const event of page.data) readAt.set(event.data.object.task_id, now);
      cursor = page.next_cursor;
      if (!writing && page.data.length === 0) break;
    }
  })();
  const body = JSON.stringify({ project_id: fixture.emptyProjectId, title: 'lag' });
  const deadline = performance.now() + load.seconds * 1000;
  const writer = async () => {
    while (performance.now() < deadline) {
      const response = await fetch(`${url}/v1/tasks`, { method: 'POST', headers, body });
      const task = (await response.json()) as { task_id: string };
      if (response.status === 201) acknowledgedAt.set(task.task_id, performance.now());
    }
  };
  await Promise.all(Array.from({ length: load.connections }, writer));
  writing = false;
  await consumer;
  const lags = [...acknowledgedAt]
    .map(([taskId, at]) => (readAt.get(taskId) ?? Infinity) - at)
    .sort((a, b) => a - b);
  const unread = lags.filter((lag) => lag === Infinity).length;
  const p99 = percentile(lags, 99);
  console.log(
    `\nNumbering lag at the peak create rate (${fmt(lags.length / load.seconds)} creates/s, ${load.connections} writers, a long-polling consumer): ` +
      `from the 2xx to the event read, p50 ${fmt(Math.max(0, percentile(lags, 50)), 1)} ms, p99 ${fmt(Math.max(0, p99), 1)} ms (< 250: ${mark(p99 < 250)}); ` +
      `events never read: ${unread}.`,
  );
}

costOfEvents().catch((error) => {
  console.error(error);
  process.exit(1);
});
