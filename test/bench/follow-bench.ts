/**
 * make bench, client kit part: the rate at which the kit's follower reads a backlog of 20,000
 * events, beside a bare loop of `GET /v1/events?limit=200` over the same backlog, in one run,
 * rounds alternating. Target: the follower within 10% of the bare loop.
 */
import { createClient } from '../../clients/typescript/src';
import { issueApiKey } from '../../src/cli/issue-api-key';
import { createKnex } from '../../src/db/knex';
import { createRepositories } from '../../src/all-repositories';
import { createMysqlDatabase } from '../support/mysql-database';
import { serviceArguments, startServerProcess } from './processes';
import { fmt, mark } from './report';

const mysqlUrl = process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';
const backlog = Number(process.env.BENCH_FOLLOW_EVENTS ?? 20_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);

async function main() {
  const database = await createMysqlDatabase(mysqlUrl, 'bench_follow');
  const service = await startServerProcess(serviceArguments(), {
    DATABASE_URL: (database.config as { url: string }).url,
    RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'warn',
  });
  const knex = createKnex(database.config);
  try {
    const key = (await issueApiKey(createRepositories(knex), 'bench', ['read', 'write'])).key;
    await knex.destroy();
    const client = createClient({ baseUrl: service.url, apiKey: key });
    const project = await client.projects.create({ name: 'backlog' });
    let next = 1;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < backlog)
          await client.tasks.create({ project_id: project.project_id, title: `t${next++}` });
      }),
    );
    // Every event numbered before reading starts.
    for (;;) {
      const head = await fetch(`${service.url}/v1/events?from=latest`, {
        headers: { Authorization: `Bearer ${key}` },
      }).then((r) => r.json() as Promise<{ next_cursor: string }>);
      const after = JSON.parse(Buffer.from(head.next_cursor, 'base64url').toString())
        .after as number;
      if (after >= backlog) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    const bare = async () => {
      let cursor = '';
      let read = 0;
      for (;;) {
        const page = (await fetch(
          `${service.url}/v1/events?limit=200${cursor && `&cursor=${cursor}`}`,
          { headers: { Authorization: `Bearer ${key}` } },
        ).then((r) => r.json())) as {
          data: unknown[];
          next_cursor: string;
          has_more: boolean;
        };
        read += page.data.length;
        cursor = page.next_cursor;
        if (!page.has_more) return read;
      }
    };
    const followed = async () => {
      let read = 0;
      for await (const event of client.events.follow({ from: 'oldest', limit: 200 })) {
        if (++read >= backlog && event.sequence >= backlog) return read;
      }
      return read;
    };
    const rates = { bare: [] as number[], follow: [] as number[] };
    for (let round = 0; round < rounds; round++) {
      for (const [name, read] of [
        ['bare', bare],
        ['follow', followed],
      ] as const) {
        const started = performance.now();
        const count = await read();
        rates[name].push(count / ((performance.now() - started) / 1000));
      }
    }
    const median = (values: number[]) =>
      [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const ratio = median(rates.follow) / median(rates.bare);
    console.log(
      `\nClient kit: reading a backlog of ${backlog} events (MariaDB), median of ${rounds} alternating rounds:`,
    );
    console.log(`  bare GET /v1/events?limit=200 loop  ${fmt(median(rates.bare))} events/s`);
    console.log(`  events.follow()                     ${fmt(median(rates.follow))} events/s`);
    console.log(
      `  follow / bare                       ${fmt(ratio, 2)} (target >= 0.90: ${mark(ratio >= 0.9)})`,
    );
  } finally {
    await service.stop();
    await database.drop();
  }
}

void main();
