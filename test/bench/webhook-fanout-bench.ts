/**
 * `make bench`, abuse part (issue 20's figures), on MariaDB: one tenant with the most webhook
 * endpoints a tenant may have, all at a receiver that never answers, writes 50 tasks of 10 KB a
 * second; meanwhile another tenant reads a task over and over, and creates a task every 100 ms
 * that it follows in the feed with a long poll. Prints whether the service stayed up, its peak
 * RSS, the other tenant's getTask latency and its feed lag (from a create's 201 to the long poll
 * answering with its event).
 *
 * BENCH_FANOUT_SECONDS: how long the tenant writes (60).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { issueApiKey } from '../../src/cli/issue-api-key';
import { createRepositories } from '../../src/all-repositories';
import { createMysqlDatabase } from '../support/mysql-database';
import { seedFixture, withKnex } from './fixture';
import { serviceArguments, startServerProcess } from './processes';
import { fmt, mark } from './report';

const seconds = Number(process.env.BENCH_FANOUT_SECONDS ?? 60);
const endpoints = 20;
const writesPerSecond = 50;
const serviceEnv = {
  RATE_LIMIT_PER_MINUTE: '0',
  AUTH_FAILURES_PER_MINUTE: '0',
  LOG_LEVEL: 'warn',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
};
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Takes every request and never answers it. */
async function silentReceiver() {
  let requests = 0;
  const server = http.createServer(() => {
    requests++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/never`,
    requests: () => requests,
    stop: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function webhookFanout(mysqlUrl: string): Promise<void> {
  const database = await createMysqlDatabase(mysqlUrl, 'tt_bench_fanout');
  const receiver = await silentReceiver();
  try {
    const { fixture, otherKey } = await withKnex(database.config, async (knex) => {
      const seeded = await seedFixture(knex, 1);
      return {
        fixture: seeded,
        otherKey: (await issueApiKey(createRepositories(knex), 'bystander', ['read', 'write'])).key,
      };
    });
    const service = await startServerProcess(serviceArguments(), {
      ...serviceEnv,
      DATABASE_URL: (database.config as { url: string }).url,
    });
    const call = async (key: string, method: string, path: string, body?: unknown) => {
      const response = await fetch(service.url + path, {
        method,
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return {
        status: response.status,
        json: (await response.json().catch(() => undefined)) as any,
      };
    };
    try {
      for (let i = 0; i < endpoints; i++) {
        const registered = await call(fixture.key, 'POST', '/v1/webhook-endpoints', {
          url: `${receiver.url}/${i}`,
        });
        if (registered.status !== 201)
          throw new Error(`registering an endpoint answered ${registered.status}`);
      }
      const otherProject = (await call(otherKey, 'POST', '/v1/projects', { name: 'bystander' }))
        .json.project_id as string;
      const otherTask = (
        await call(otherKey, 'POST', '/v1/tasks', { project_id: otherProject, title: 'read me' })
      ).json.task_id as string;

      let running = true;
      const failures = new Map<string, number>();
      const failed = (what: string) => failures.set(what, (failures.get(what) ?? 0) + 1);
      const started = performance.now();
      const end = started + seconds * 1000;

      // The fan-out tenant: 50 creates a second on a fixed schedule, whatever the answers take.
      const description = 'x'.repeat(10_000);
      const writes: Array<Promise<void>> = [];
      const writeTimes: number[] = [];
      const writer = (async () => {
        for (let i = 0; performance.now() < end; i++) {
          const due = started + (i * 1000) / writesPerSecond;
          if (due > performance.now()) await sleep(due - performance.now());
          const at = performance.now();
          writes.push(
            call(fixture.key, 'POST', '/v1/tasks', {
              project_id: fixture.emptyProjectId,
              title: `fan-out ${i}`,
              description,
            }).then(
              (r) => {
                writeTimes.push(performance.now() - at);
                if (r.status !== 201) failed(`fan-out createTask ${r.status}`);
              },
              () => void failed('fan-out createTask: no answer'),
            ),
          );
        }
      })();

      // The other tenant's reads, one after another.
      const reads: number[] = [];
      const reader = (async () => {
        while (running) {
          const at = performance.now();
          const r = await call(otherKey, 'GET', `/v1/tasks/${otherTask}`).catch(() => undefined);
          reads.push(performance.now() - at);
          if (r?.status !== 200) failed(`bystander getTask ${r?.status ?? 'no answer'}`);
          await sleep(10);
        }
      })();

      // The other tenant's creates, and the feed that follows them.
      const answeredAt = new Map<string, number>();
      const lags: number[] = [];
      const creator = (async () => {
        while (running) {
          const r = await call(otherKey, 'POST', '/v1/tasks', {
            project_id: otherProject,
            title: 'followed',
          }).catch(() => undefined);
          if (r?.status === 201) answeredAt.set(r.json.task_id, performance.now());
          else failed(`bystander createTask ${r?.status ?? 'no answer'}`);
          await sleep(100);
        }
      })();
      const follower = (async () => {
        let cursor = (await call(otherKey, 'GET', '/v1/events?limit=100')).json
          .next_cursor as string;
        const early = new Map<string, number>();
        while (running) {
          const r = await call(
            otherKey,
            'GET',
            `/v1/events?limit=100&wait=5&cursor=${cursor}`,
          ).catch(() => undefined);
          if (r?.status !== 200) {
            failed(`bystander feed ${r?.status ?? 'no answer'}`);
            await sleep(100);
            continue;
          }
          const now = performance.now();
          cursor = r.json.next_cursor;
          for (const event of r.json.data)
            if (event.type === 'task.created') early.set(event.data.object.task_id, now);
          // An event can reach the feed before its create's answer reaches the client: a lag of 0.
          for (const [taskId, seenAt] of early) {
            const answered = answeredAt.get(taskId);
            if (answered === undefined) continue;
            lags.push(Math.max(0, seenAt - answered));
            early.delete(taskId);
          }
        }
      })();

      await writer;
      running = false;
      await Promise.all([reader, creator, follower]);
      await Promise.allSettled(writes);
      const alive = await fetch(`${service.url}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      const rss = service.peakRssMb();
      reads.sort((a, b) => a - b);
      writeTimes.sort((a, b) => a - b);
      lags.sort((a, b) => a - b);
      const readP99 = percentile(reads, 99);
      const lagP99 = percentile(lags, 99);
      console.log(
        `\n## One tenant with ${endpoints} endpoints at a receiver that never answers, writing ${writesPerSecond} tasks of 10 KB a second for ${seconds} s; another tenant reads and follows its feed\n`,
      );
      console.log(
        `- the service stayed up: ${mark(alive)}; requests that failed: ${failures.size === 0 ? 'none' : [...failures].map(([what, n]) => `${what} × ${n}`).join(', ')}`,
      );
      console.log(`- service peak RSS ${fmt(rss)} MB (< 250: ${mark(rss < 250)})`);
      console.log(
        `- the writing tenant's createTask: ${writeTimes.length} answered, p50 ${fmt(percentile(writeTimes, 50), 1)} ms, p99 ${fmt(percentile(writeTimes, 99), 1)} ms`,
      );
      console.log(
        `- the other tenant's getTask: ${reads.length} reads, p50 ${fmt(percentile(reads, 50), 1)} ms, p99 ${fmt(readP99, 1)} ms (< 50: ${mark(readP99 < 50)})`,
      );
      console.log(
        `- the other tenant's feed lag: ${lags.length} events, p50 ${fmt(percentile(lags, 50))} ms, p99 ${fmt(lagP99)} ms (< 250: ${mark(lagP99 < 250)})`,
      );
      console.log(`- the receiver was sent ${receiver.requests()} requests`);
    } finally {
      await service.stop();
    }
  } finally {
    await receiver.stop();
    await database.drop();
  }
}
