/**
 * Version 2026-12-15's bulk changes and text search on a three-node MariaDB Galera cluster of the
 * test's own (issue 46 "Planning"), with an instance on node 1 and another on node 2: a bulk
 * update of 300 tasks through one while the other changes some of the same tasks commits or
 * fails whole (a certification conflict is run again, as other writes' are), each changed task
 * with one event of the bulk request's, as the feed read through both nodes says; a tenant's 2
 * places for bulk changes are counted across the instances (the leases table is the cluster's);
 * and a task made through node 1 is found by its words through node 2 (InnoDB FULLTEXT on the
 * row the applier committed there).
 */
import mysql from 'mysql2/promise';
import type { components } from '../../generated/api';
import { wordToken } from '../../src/db/task-filter/words';
import { GaleraCluster, type GaleraNode } from '../support/galera-cluster';
import { seedTenant } from '../support/keyed-creates';
import { countsOf, tenantCalls, type Answer } from '../support/tenant-calls';
import { serveProcess, stopGracefully, type ServiceProcess } from '../support/service-process';

type Task = components['schemas']['Task'];
type Event = components['schemas']['Event'];
type TaskFilter = components['schemas']['TaskFilter'];

const newest = '2026-12-15';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let cluster: GaleraCluster;
let key: string;
let projectId: string;
/** The instance on node 1, and the one on node 2. */
let a: ServiceProcess;
let b: ServiceProcess;
const { call, internalErrors, wholeFeed } = tenantCalls(() => key, {
  'Api-Version': newest,
});

beforeAll(async () => {
  cluster = await GaleraCluster.start();
  ({ key, projectId } = await seedTenant({ client: 'mysql', url: cluster.nodes[0].url }));
  a = await serveProcess({ client: 'mysql', url: cluster.nodes[0].url });
  b = await serveProcess({ client: 'mysql', url: cluster.nodes[1].url });
}, 240_000);

afterAll(async () => {
  try {
    await Promise.all([a, b].filter(Boolean).map(({ child }) => stopGracefully(child)));
  } finally {
    await cluster?.destroy();
  }
}, 60_000);

afterEach(() => {
  expect(internalErrors.splice(0)).toEqual([]);
});

/** Every task of the tenant the filter finds, page after page, through one instance. */
async function searchAll(base: string, filter: TaskFilter): Promise<Task[]> {
  const found: Task[] = [];
  let cursor: string | undefined;
  do {
    const page = await call(base, 'POST', '/v1/tasks/search', { filter, limit: 200, cursor });
    expect(page.status).toBe(200);
    found.push(...page.body.data);
    cursor = page.body.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return found;
}

/** The whole feed through one instance, once every committed event has its number. */
async function numberedFeed(base: string, node: GaleraNode): Promise<Event[]> {
  const deadline = Date.now() + 30_000;
  while (
    Number(
      (
        await cluster.query<{ n: number }>(
          node,
          'select count(*) as n from events where sequence = 0 or sequence is null',
        )
      )[0].n,
    ) > 0
  ) {
    if (Date.now() > deadline) throw new Error('events still unnumbered after 30 s');
    await sleep(100);
  }
  return wholeFeed(base);
}

async function createTasks(base: string, count: number, title: string): Promise<Task[]> {
  const made: Task[] = [];
  for (let start = 0; start < count; start += 25) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(25, count - start) }, (_, i) =>
        call<Task>(base, 'POST', '/v1/tasks', {
          project_id: projectId,
          title: `${title} ${start + i}`,
        }),
      ),
    );
    expect(countsOf(batch.map((answer) => answer.status))).toEqual({ 201: batch.length });
    made.push(...batch.map((answer) => answer.body));
  }
  return made;
}

/**
 * A root connection to `node`, in the service's database, whose reads wait for the node to apply
 * what the cluster committed (as the service's do): a locking read of rows another node made must
 * find them, not lock the gap where the node's applier is about to put them (the applier would
 * abort it, and the rows would be free after all).
 */
async function adminOn(node: GaleraNode): Promise<mysql.Connection> {
  const connection = await node.connect();
  await connection.query('SET SESSION wsrep_sync_wait = 1');
  await connection.query('USE tasks');
  return connection;
}

/** Why the instances answered 503, from their logs: each database error's code and message, counted. */
function unavailableCauses(): Record<string, number> {
  const causes: Record<string, number> = {};
  for (const line of [a, b].flatMap((service) => service.lines)) {
    if (line.msg !== 'database unavailable') continue;
    const cause = `${line.err?.code ?? line.err?.type}: ${String(line.err?.message).slice(0, 80)}`;
    causes[cause] = (causes[cause] ?? 0) + 1;
  }
  return causes;
}

/** A status counter of a node. */
const counter = async (node: GaleraNode, name: string) =>
  Number((await node.status([name]))?.[name]);

/** Polls `condition` every `everyMs` until it holds or `timeoutMs` has passed; whether it held. */
async function eventually(condition: () => Promise<boolean>, timeoutMs: number, everyMs = 50) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
}

/** The events of each request, from a feed. */
function byRequestOf(feed: Event[]): Map<string, Event[]> {
  const byRequest = new Map<string, Event[]>();
  for (const event of feed)
    byRequest.set(event.request_id, [...(byRequest.get(event.request_id) ?? []), event]);
  return byRequest;
}

describe('a bulk update of 300 tasks through node 1 beside changes of the same tasks through node 2', () => {
  let tasks: Task[];
  let all: string[];
  beforeAll(async () => {
    tasks = await createTasks(a.url, 300, 'bulk');
    all = tasks.map((task) => task.task_id).sort();
  }, 60_000);

  it('runs again from its reads when a change of one of its rows committed on node 2 aborts it, and commits whole', async () => {
    // The bulk change waits on node 1, its rows but the last locked, for the last, which a
    // transaction of the test's own holds there. Meanwhile the first is changed through node 2:
    // applied on node 1, that change takes the row from the bulk change, which the node aborts
    // (a brute-force abort: Galera's conflict between a local transaction and a replicated one).
    // The service runs it again, as any write after a conflict: it reads the rows again, the
    // change among them, and once the test lets go of the last row it commits whole.
    // The bulk change waits at most 3 s for the locked row (the service's innodb_lock_wait_timeout):
    // an attempt that a stalled machine let run past that (the bulk refused whole, or answered
    // before the change through node 2 came) is tried again with other values.
    const [first, last] = [all[0], all[all.length - 1]];
    const node1 = cluster.nodes[0];
    const waiting = async () =>
      Number(
        (
          await cluster.query<{ n: number }>(
            node1,
            "select count(*) as n from information_schema.innodb_trx where trx_state = 'LOCK WAIT'",
          )
        )[0].n,
      ) > 0;
    let held: { attempt: number; title: string; answer: Answer } | undefined;
    const tried: string[] = [];
    for (let attempt = 1; attempt <= 3 && held === undefined; attempt++) {
      const aborts = await counter(node1, 'wsrep_local_bf_aborts');
      const locker = await adminOn(node1);
      const title = `changed through node 2, ${attempt}`;
      let bulk: Promise<Answer> | undefined;
      let reachedLock: boolean;
      let patch: Answer<Task> | undefined;
      let abortedOnNode1 = false;
      try {
        await locker.query('BEGIN');
        await locker.query('select task_id from tasks where task_id = ? for update', [last]);
        bulk = call(
          a.url,
          'POST',
          '/v1/tasks/bulk-update',
          { task_ids: all, changes: { assignee: `held bulk ${attempt}`, labels_add: ['held'] } },
          { 'X-Request-Id': `bulk-held-${attempt}` },
        );
        // InnoDB refreshes what information_schema.innodb_trx shows only when it was last read
        // over 100 ms before: read every 50 ms (quick polls, as on MariaDB 10.11.19 here), it
        // never showed the wait.
        reachedLock = await eventually(waiting, 10_000, 250);
        if (reachedLock) {
          patch = await call<Task>(
            b.url,
            'PATCH',
            `/v1/tasks/${first}`,
            { title },
            { 'X-Request-Id': `patch-held-${attempt}` },
          );
          abortedOnNode1 = await eventually(
            async () => (await counter(node1, 'wsrep_local_bf_aborts')) > aborts,
            5000,
          );
        }
      } finally {
        await locker.query('ROLLBACK').catch(() => {});
        await locker.end();
      }
      const answer = await bulk!;
      tried.push(`${answer.status} (lock ${reachedLock}, aborted ${abortedOnNode1})`);
      // A bulk change refused is refused whole: none of its events.
      if (answer.status !== 200) {
        expect(answer.status).toBe(503);
        continue;
      }
      if (reachedLock && abortedOnNode1 && patch?.status === 200) held = { attempt, title, answer };
    }
    console.log(
      `a bulk change aborted on node 1 by a change through node 2: ${tried.join('; ')}; causes ${JSON.stringify(unavailableCauses())}`,
    );
    expect(held).toBeDefined();
    const { attempt, title, answer } = held!;
    expect(answer.body).toEqual(
      expect.objectContaining({ matched: 300, changed: 300, dry_run: false }),
    );
    // Both changes kept, through either node.
    for (const base of [a.url, b.url]) {
      const read = (await call<Task>(base, 'GET', `/v1/tasks/${first}`)).body;
      expect([read.title, read.assignee, read.labels]).toEqual([
        title,
        `held bulk ${attempt}`,
        ['held'],
      ]);
    }
    // One event of the bulk change for each task, the first as the change through node 2 left it;
    // none of an attempt refused.
    const feed = await numberedFeed(b.url, cluster.nodes[1]);
    expect(await numberedFeed(a.url, node1)).toEqual(feed);
    const byRequest = byRequestOf(feed);
    const events = byRequest.get(`bulk-held-${attempt}`) ?? [];
    expect(events.map((e) => (e.data.object as Task).task_id).sort()).toEqual(all);
    expect(events.map((e) => e.type)).toEqual(Array(300).fill('task.updated'));
    const ofFirst = events.find((e) => (e.data.object as Task).task_id === first)!;
    expect((ofFirst.data.object as Task).title).toBe(title);
    expect(byRequest.get(`patch-held-${attempt}`)?.length).toBe(1);
    for (let other = 1; other < attempt; other++)
      if (tried[other - 1].startsWith('503'))
        expect(byRequest.get(`bulk-held-${other}`)).toBeUndefined();
  }, 120_000);

  it('commits a bulk update of 300 tasks through node 1 whole, or refuses it whole, while node 2 changes some of the same tasks all along', async () => {
    // Every tenth task is changed through node 2 all the while, by three clients, each its own ten
    // one after the other: changes of the same rows on two nodes, which conflict at commit.
    const hot = all.filter((_, i) => i % 10 === 0);
    const hotOf = (w: number) => hot.filter((_, i) => i % 3 === w);
    /** Each hot task's title as its last acknowledged PATCH left it, and every PATCH's answer. */
    const lastTitle = new Map(
      (await searchAll(a.url, { project_id: { in: [projectId] } })).map((t) => [
        t.task_id,
        t.title,
      ]),
    );
    const patches: Array<{ requestId: string; status: number; type?: string }> = [];
    const rounds: Array<{ round: number; status: number; body: any; ms: number }> = [];

    for (let round = 0; round < 2; round++) {
      let patching = true;
      const done = [0, 0, 0];
      const worker = async (w: number) => {
        for (let n = 0; patching; n++) {
          const taskId = hotOf(w)[n % hotOf(w).length];
          const requestId = `patch-${round}-${w}-${n}`;
          const title = `hot ${round}-${w}-${n}`;
          const answer = await call(
            b.url,
            'PATCH',
            `/v1/tasks/${taskId}`,
            { title },
            { 'X-Request-Id': requestId },
          );
          patches.push({ requestId, status: answer.status, type: answer.body?.type });
          if (answer.status === 200) lastTitle.set(taskId, title);
          done[w]++;
        }
      };
      const workers = [0, 1, 2].map(worker);
      try {
        // The PATCHes are under way on node 2 before the bulk change begins on node 1.
        const deadline = Date.now() + 30_000;
        while (done.some((n) => n < 2) && Date.now() < deadline) await sleep(20);
        const started = Date.now();
        const bulk = await call(
          a.url,
          'POST',
          '/v1/tasks/bulk-update',
          { task_ids: all, changes: { assignee: `bulk ${round}`, labels_add: [`round-${round}`] } },
          { 'X-Request-Id': `bulk-${round}` },
        );
        rounds.push({ round, status: bulk.status, body: bulk.body, ms: Date.now() - started });
        // A few more PATCHes after it, on rows it may just have changed.
        const more = done.map((n) => n + 2);
        while (done.some((n, w) => n < more[w]) && Date.now() < deadline + 30_000) await sleep(20);
      } finally {
        patching = false;
        await Promise.all(workers);
      }
    }
    console.log(
      `bulk updates of 300 tasks through node 1 beside PATCHes through node 2: ${JSON.stringify(rounds.map(({ round, status, ms }) => ({ round, status, ms })))}; PATCHes ${JSON.stringify(countsOf(patches.map((p) => p.status)))}; causes ${JSON.stringify(unavailableCauses())}`,
    );

    // Each PATCH succeeded or was a documented 503 (conflicts past its retries); never a 500.
    expect(patches.filter((p) => p.status !== 200 && p.status !== 503)).toEqual([]);
    expect(
      patches.filter((p) => p.status === 503 && p.type !== '/problems/service-unavailable'),
    ).toEqual([]);

    // The feed as each node has it: the same, and each change in it once.
    const feed = await numberedFeed(a.url, cluster.nodes[0]);
    expect(await numberedFeed(b.url, cluster.nodes[1])).toEqual(feed);
    const byRequest = byRequestOf(feed);

    // Each bulk change whole or not at all, through either node.
    for (const { round, status, body } of rounds) {
      const labelled = [a.url, b.url].map(async (base) =>
        (await searchAll(base, { labels: { has: `round-${round}` } })).map((t) => t.task_id).sort(),
      );
      const events = byRequest.get(`bulk-${round}`) ?? [];
      if (status === 200) {
        expect(body).toMatchObject({ matched: 300, changed: 300, dry_run: false });
        expect(await Promise.all(labelled)).toEqual([all, all]);
        expect(events.map((e) => e.type)).toEqual(Array(300).fill('task.updated'));
        expect(events.map((e) => (e.data.object as Task).task_id).sort()).toEqual(all);
        expect(
          events.filter(
            (e) =>
              (e.data.object as Task).assignee !== `bulk ${round}` ||
              !(e.data.object as Task).labels!.includes(`round-${round}`),
          ),
        ).toEqual([]);
      } else {
        // Refused whole: a problem document, no task changed by it, no event of it.
        expect([round, status, body?.type]).toEqual([round, 503, '/problems/service-unavailable']);
        expect(await Promise.all(labelled)).toEqual([[], []]);
        expect(events).toEqual([]);
      }
    }
    // The last bulk change that committed left its assignee on every task.
    const lastCommitted = rounds.filter((r) => r.status === 200).at(-1);
    const now = new Map(
      (await searchAll(b.url, { project_id: { in: [projectId] } })).map((t) => [t.task_id, t]),
    );
    expect(all.filter((id) => !now.has(id))).toEqual([]);
    if (lastCommitted !== undefined)
      expect(all.filter((id) => now.get(id)!.assignee !== `bulk ${lastCommitted.round}`)).toEqual(
        [],
      );
    // Every acknowledged PATCH kept: each hot task has its last one's title, and one event each.
    expect(hot.filter((id) => now.get(id)!.title !== lastTitle.get(id))).toEqual([]);
    const acknowledged = patches.filter((p) => p.status === 200);
    expect(acknowledged.filter((p) => byRequest.get(p.requestId)?.length !== 1)).toEqual([]);
    expect(patches.filter((p) => p.status !== 200 && byRequest.has(p.requestId))).toEqual([]);
  }, 120_000);
});

it("counts a tenant's two places for bulk changes across the instances on both nodes: a third is 429", async () => {
  const held = await createTasks(a.url, 4, 'held');
  const ids = held.map((task) => task.task_id);
  /** Places the tenant holds now, as node 3 sees them. */
  const placesHeld = async () =>
    Number(
      (
        await cluster.query<{ n: number }>(
          cluster.nodes[2],
          "select count(*) as n from leases where name like 'bulk:%' and expires_at > utc_timestamp(3)",
        )
      )[0].n,
    );
  const update = (base: string, taskIds: string[], assignee: string) =>
    call(base, 'POST', '/v1/tasks/bulk-update', { task_ids: taskIds, changes: { assignee } });

  // A call waits, holding its place, for rows a transaction of the test's own has locked on its
  // node (locks are a node's own: one on each). It waits at most 3 s (the service's
  // innodb_lock_wait_timeout), so a scenario that a stalled machine let run past that is tried again.
  let outcome: string | undefined;
  for (let attempt = 1; attempt <= 3 && outcome === undefined; attempt++) {
    const lockers = await Promise.all([adminOn(cluster.nodes[0]), adminOn(cluster.nodes[1])]);
    try {
      for (const locker of lockers) {
        await locker.query('BEGIN');
        await locker.query(`select task_id from tasks where task_id in (?) for update`, [ids]);
      }
      const answered = [false, false];
      const running = [
        update(a.url, ids.slice(0, 2), `held a ${attempt}`),
        update(b.url, ids.slice(2), `held b ${attempt}`),
      ].map((promise, i) => promise.finally(() => (answered[i] = true)));
      const deadline = Date.now() + 10_000;
      while ((await placesHeld()) < 2 && Date.now() < deadline) await sleep(50);
      const thirds = await Promise.all([
        update(a.url, ids, 'third a'),
        update(b.url, ids, 'third b'),
      ]);
      const stillHeld = !answered.includes(true);
      for (const locker of lockers) await locker.query('ROLLBACK');
      const first = await Promise.all(running);
      if (!stillHeld) {
        console.log(
          `attempt ${attempt}: a held call answered (${first.map((x) => x.status)}) before the third was refused; again`,
        );
        continue;
      }
      for (const third of thirds) {
        expect(third.status).toBe(429);
        expect(third.body).toMatchObject({ type: '/problems/rate-limited', status: 429 });
        expect(third.body.detail).toMatch(/tenant is running 2 bulk changes/);
        expect(third.headers.get('retry-after')).toBe('1');
      }
      // The held calls answer once the rows are free: 200, or 503 if their wait ran out first.
      expect(first.map((x) => [200, 503].includes(x.status))).toEqual([true, true]);
      outcome = `held ${first.map((x) => x.status)}, thirds ${thirds.map((x) => x.status)}`;
    } finally {
      for (const locker of lockers) await locker.end().catch(() => {});
    }
  }
  expect(outcome).toBeDefined();
  console.log(`bulk places across two nodes: ${outcome}`);
  // Every place is given back: a call through either instance runs again, and nothing the
  // refused ones asked was made.
  expect(await placesHeld()).toBe(0);
  expect((await update(b.url, ids, 'after')).status).toBe(200);
  expect((await update(a.url, ids, 'after again')).status).toBe(200);
  expect(await searchAll(a.url, { assignee: { in: ['third a', 'third b'] } })).toEqual([]);
}, 90_000);

it('finds a task made through node 1 by its words through node 2, and follows its changes', async () => {
  const words = 'zephyrine quokka';
  const made = await call<Task>(a.url, 'POST', '/v1/tasks', {
    project_id: projectId,
    title: 'Galera zephyrine',
    description: 'a quokka on node one',
  });
  expect(made.status).toBe(201);
  const found = async (base: string, text: string) =>
    (await searchAll(base, { text })).map((task) => task.task_id);
  // At once: the search waits for the node to apply what the cluster committed (wsrep_sync_wait),
  // and the applier's commit puts the row's words in InnoDB's full-text cache as a local one does.
  expect(await found(b.url, words)).toEqual([made.body.task_id]);
  expect(await found(b.url, 'ZEPHYRINE')).toEqual([made.body.task_id]);

  const changed = await call<Task>(a.url, 'PATCH', `/v1/tasks/${made.body.task_id}`, {
    title: 'Galera wallaby',
  });
  expect(changed.status).toBe(200);
  expect(await found(b.url, 'zephyrine')).toEqual([]);
  expect(await found(b.url, 'wallaby quokka')).toEqual([made.body.task_id]);

  // And the other way, through node 1, of a change made through node 2.
  const other = await call<Task>(b.url, 'POST', '/v1/tasks', {
    project_id: projectId,
    title: 'made on node two: numbat',
  });
  expect(await found(a.url, 'numbat')).toEqual([other.body.task_id]);
  expect((await call(b.url, 'DELETE', `/v1/tasks/${other.body.task_id}`)).status).toBe(204);
  expect(await found(a.url, 'numbat')).toEqual([]);
  // Every node's index has the rows.
  for (const node of cluster.nodes) {
    const rows = await cluster.query<{ n: number }>(
      node,
      'select count(*) as n from task_search_words where match (search_words) against (? in boolean mode)',
      [`+${wordToken('wallaby')}`],
    );
    expect([node.name, Number(rows[0].n)]).toEqual([node.name, 1]);
  }
}, 60_000);
