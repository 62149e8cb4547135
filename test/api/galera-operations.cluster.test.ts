/**
 * The operators' runbooks of deploy/galera/README.md, followed step by step on a three-node
 * cluster of the repository's own node configuration, HAProxy and health check, with keyed
 * creates going on through two instances: the health check logs in as its own user and says why
 * it cannot; a joiner whose state transfer failed is started again; a full restart after every
 * node crashed; a lone survivor of a quorum loss; a rolling restart with no request failed. The
 * clients reach the instances through deploy/http-load-balancer.cfg. Each scenario ends with
 * every key sent again, as a client would: nothing acknowledged is lost and no key made two tasks.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../src/paths';
import { freeServerPort } from '../support/free-port';
import {
  GaleraCluster,
  checkUser,
  haproxy,
  serviceUser,
  type GaleraNode,
} from '../support/galera-cluster';
import {
  retryEveryKey,
  seedTenant,
  startKeyedCreates,
  type KeyedCreate,
} from '../support/keyed-creates';
import { serveProcess, stopGracefully, type ServiceProcess } from '../support/service-process';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let cluster: GaleraCluster;
let key: string;
let projectId: string;
const instances: ServiceProcess[] = [];
/** HAProxy on deploy/http-load-balancer.cfg in front of the instances, and where clients reach it. */
let balancer: ChildProcess | undefined;
let balancerUrl: string;

beforeAll(async () => {
  cluster = await GaleraCluster.start();
  ({ key, projectId } = await seedTenant({ client: 'mysql', url: cluster.proxyUrl }));
  for (let i = 0; i < 2; i++)
    instances.push(await serveProcess({ client: 'mysql', url: cluster.proxyUrl }));
  const port = await freeServerPort();
  const out = fs.openSync(path.join(cluster.folder, 'http-load-balancer.log'), 'a');
  balancer = spawn(
    haproxy,
    ['-db', '-f', path.join(projectRoot, 'deploy', 'http-load-balancer.cfg')],
    {
      detached: true,
      stdio: ['ignore', out, out],
      env: {
        ...process.env,
        TASKS_LISTEN: `127.0.0.1:${port}`,
        TASKS_INSTANCE1: new URL(instances[0].url).host,
        TASKS_INSTANCE2: new URL(instances[1].url).host,
      },
    },
  );
  fs.closeSync(out);
  balancerUrl = `http://127.0.0.1:${port}`;
  await waitFor(
    'the load balancer serving',
    async () => {
      if (balancer!.exitCode !== null)
        throw new Error(
          `the load balancer exited: ${fs.readFileSync(path.join(cluster.folder, 'http-load-balancer.log'), 'utf8')}`,
        );
      return (await fetch(`${balancerUrl}/readyz`).catch(() => undefined))?.status === 200;
    },
    30_000,
  );
}, 180_000);

afterAll(async () => {
  try {
    if (balancer?.pid !== undefined && balancer.exitCode === null) {
      const exited = new Promise((resolve) => balancer!.once('exit', resolve));
      process.kill(-balancer.pid, 'SIGKILL');
      await exited;
    }
    await Promise.all(instances.map(({ child }) => stopGracefully(child)));
  } finally {
    await cluster?.destroy();
  }
}, 60_000);

/** Polls `condition` until it holds; fails with `what` after `timeoutMs`. */
async function waitFor(
  what: string,
  condition: () => Promise<boolean> | boolean,
  timeoutMs: number,
) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not so after ${timeoutMs} ms`);
    await sleep(200);
  }
}

/** Keyed creates by four writers through the load balancer, keys starting with `prefix`. */
function keyedLoad(prefix: string) {
  const load = startKeyedCreates(balancerUrl, key, projectId, 4, prefix);
  const acknowledged = () => load.creates.filter((c) => c.acknowledged).length;
  return {
    ...load,
    acknowledged,
    /** Waits until `more` creates beyond those acknowledged now are acknowledged: the service writes. */
    async progresses(more: number, timeoutMs: number) {
      const target = acknowledged() + more;
      await waitFor(`${more} more creates acknowledged`, () => acknowledged() >= target, timeoutMs);
    },
  };
}

/**
 * Sends every key again until it is acknowledged: each acknowledged create is still the task it
 * was acknowledged as, and every node holds exactly one task per key.
 */
async function expectNothingLost(prefix: string, creates: KeyedCreate[]) {
  const answers = await retryEveryKey(balancerUrl, key, projectId, creates);
  expect(
    creates.filter((c) => c.acknowledged && answers.get(c.key)!.taskId !== c.acknowledged),
  ).toEqual([]);
  for (const node of cluster.nodes) {
    const rows = await cluster.query<{ title: string; n: number }>(
      node,
      'select title, count(*) as n from tasks where title like ? group by title',
      [`${prefix}-%`],
    );
    expect(rows.filter((row) => Number(row.n) !== 1)).toEqual([]);
    expect(rows.length).toBe(creates.length);
  }
}

/** The health check as HAProxy runs it (an empty environment but PATH), against one node. */
function runHealthCheck(port: number, env: Record<string, string> = {}) {
  return spawnSync(cluster.healthCheck, ['', '', '127.0.0.1', String(port)], {
    encoding: 'utf8',
    env: { PATH: '/usr/bin:/bin', ...env },
  });
}

it('has the health check log in as its user with no privileges, through the option file beside it, and say why it cannot', async () => {
  const port = cluster.nodes[0].ports.client;
  expect(runHealthCheck(port)).toMatchObject({ status: 0, stderr: '' });

  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-check-'));
  try {
    const wrong = path.join(folder, 'wrong.cnf');
    fs.writeFileSync(wrong, `[client]\nuser=${checkUser.name}\npassword=not-its-password\n`);
    const refused = runHealthCheck(port, { GALERA_CHECK_OPTIONS: wrong });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(`Access denied for user '${checkUser.name}'@'127.0.0.1'`);

    const missing = runHealthCheck(port, { GALERA_CHECK_OPTIONS: path.join(folder, 'none.cnf') });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/cannot read the option file .*none\.cnf/);
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
  // HAProxy's own checks pass on every node, and its admin socket says so.
  await waitFor(
    'every node UP in HAProxy',
    async () => Object.values(await cluster.haproxyServers()).every((s) => s.status === 'UP'),
    30_000,
  );
});

it('starts a joiner whose state transfer failed again, and says what it logged when it never succeeds', async () => {
  const victim = cluster.nodes[2];
  await victim.kill();
  await cluster.nodes[0].waitSynced(2, 60_000);
  // Without its state the node needs a full copy; its transfer's port is taken, so the copy fails
  // (and the donor's, sent to the port's taker, which hangs up at once).
  fs.rmSync(path.join(victim.dataDir, 'grastate.dat'), { force: true });
  const blocker = net.createServer((connection) => connection.destroy());
  await new Promise<void>((resolve) => blocker.listen(victim.ports.sst, '127.0.0.1', resolve));
  const load = keyedLoad('transfer');
  try {
    await expect(victim.start({ size: 3, timeoutMs: 120_000, attempts: 2 })).rejects.toThrow(
      /WSREP_SST: \[ERROR\][\s\S]*start 2 of at most 2, each a failed state transfer/,
    );
    // Taken for the first start only, as a transfer that dies now and then under load: started again, it joins.
    const joining = victim.start({ size: 3, timeoutMs: 180_000 });
    victim.child!.once('exit', () => blocker.close());
    expect(await joining).toBe(2);
    await waitFor(
      'the joiner UP in HAProxy',
      async () => (await cluster.haproxyServers()).node3?.status === 'UP',
      30_000,
    );
    await load.progresses(20, 60_000);
  } finally {
    blocker.close();
    await load.stop();
  }
  await expectNothingLost('transfer', load.creates);
}, 420_000);

it('comes back from a crash of every node by the runbook, with nothing acknowledged lost', async () => {
  const load = keyedLoad('crash');
  let acknowledgedAtCrash: number | undefined;
  try {
    await load.progresses(30, 60_000);
    await Promise.all(cluster.nodes.map((node) => node.kill()));
    acknowledgedAtCrash = load.acknowledged();
    const crashedAt = Date.now();

    // grastate.dat names no node to bootstrap from after a crash.
    expect(cluster.nodes.map((node) => node.grastate())).toEqual(
      cluster.nodes.map(() => expect.objectContaining({ seqno: '-1', safe_to_bootstrap: '0' })),
    );
    // 1. galera_recovery on every node: the last position each committed.
    const positions = cluster.nodes.map((node) => node.recoverPosition()!);
    expect(new Set(positions.map((p) => p.uuid)).size).toBe(1);
    const seqnos = positions.map((p) => p.seqno);
    const first = seqnos.indexOf(Math.max(...seqnos));
    // 2. safe_to_bootstrap: 1 on the most advanced, bootstrapped from its recovered position.
    cluster.nodes[first].markSafeToBootstrap();
    await cluster.nodes[first].start({
      size: 1,
      timeoutMs: 90_000,
      extra: [
        '--wsrep-new-cluster',
        `--wsrep_start_position=${positions[first].uuid}:${seqnos[first]}`,
      ],
    });
    // 3. The others, one at a time, as the packaged service starts them.
    let size = 1;
    for (const node of cluster.nodes.filter((_, i) => i !== first))
      await node.restart(180_000, ++size);
    await load.progresses(30, 60_000);
    console.log(
      `full restart: positions ${JSON.stringify(seqnos)}, bootstrapped ${cluster.nodes[first].name}; writes again ${Date.now() - crashedAt} ms after the crash; ${JSON.stringify(Object.fromEntries(load.statuses))}`,
    );
  } finally {
    await load.stop();
  }
  expect(acknowledgedAtCrash ?? 0).toBeGreaterThan(0);
  await expectNothingLost('crash', load.creates);
}, 600_000);

it('keeps a lone survivor of a quorum loss writing once it is told to bootstrap, by the runbook', async () => {
  const [survivor, ...lost] = cluster.nodes;
  const load = keyedLoad('quorum');
  try {
    await load.progresses(30, 60_000);
    await Promise.all(lost.map((node) => node.kill()));
    await waitFor(
      'the survivor out of the primary component',
      async () =>
        (await survivor.status(['wsrep_cluster_status']))?.wsrep_cluster_status === 'non-Primary',
      60_000,
    );
    // HAProxy takes it out, and its log says why.
    await waitFor(
      'the survivor DOWN in HAProxy',
      async () => (await cluster.haproxyServers()).node1?.status === 'DOWN',
      30_000,
    );
    expect(fs.readFileSync(cluster.haproxyLog, 'utf8')).toMatch(
      `galera-health-check: 127.0.0.1:${survivor.ports.client}: not serving: cluster status non-Primary`,
    );
    const admin = await survivor.connect();
    try {
      await admin.query("SET GLOBAL wsrep_provider_options = 'pc.bootstrap=YES'");
    } finally {
      await admin.end();
    }
    await survivor.waitSynced(1, 60_000);
    await load.progresses(30, 60_000);
    for (const [i, node] of lost.entries()) await node.restart(180_000, i + 2);
    await load.progresses(10, 60_000);
  } finally {
    await load.stop();
  }
  await expectNothingLost('quorum', load.creates);
}, 600_000);

/** deploy/galera/close-idle-sessions.sh for the service's user on `node`, as root. */
function closeIdleSessions(node: GaleraNode): Promise<{ status: number | null; stderr: string }> {
  const script = path.join(projectRoot, 'deploy', 'galera', 'close-idle-sessions.sh');
  const child = spawn(
    script,
    [serviceUser.name, '--host=127.0.0.1', `--port=${node.ports.client}`, '--user=root'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.once('close', (status) => resolve({ status, stderr })));
}

it('restarts every node in turn by the rolling runbook: drained, stopped, started, Synced, back', async () => {
  const load = keyedLoad('rolling');
  /** The longest wait between two acknowledgements from `since` on: how long writes paused. */
  const longestPause = (since: number) => {
    const times = load.creates
      .map((c) => c.acknowledgedAt)
      .filter((t): t is number => t !== undefined && t >= since)
      .sort((a, b) => a - b);
    return Math.max(0, ...times.slice(1).map((t, i) => t - times[i]));
  };
  const pauses: string[] = [];
  const logged = instances.map((instance) => instance.lines.length);
  const haproxyLogged = fs.statSync(cluster.haproxyLog).size;
  try {
    await load.progresses(20, 60_000);
    for (const node of cluster.nodes) {
      // 1. Drained in HAProxy: no new connection goes to it, and those it has stay (maintenance
      // would cut them at once, on-marked-down shutdown-sessions). The instances' connections to
      // it are closed, each while idle; then, with none left, it goes into maintenance.
      expect(await cluster.haproxyCommand(`set server nodes/${node.name} state drain`)).toBe('\n');
      expect(await closeIdleSessions(node)).toEqual({ status: 0, stderr: '' });
      // HAProxy ends a session once the instance, told of the close, has closed its side too.
      await waitFor(
        `${node.name} drained in HAProxy`,
        async () => (await cluster.haproxyServers())[node.name]?.sessions === 0,
        10_000,
      );
      expect((await cluster.haproxyServers())[node.name]?.status).toBe('DRAIN');
      expect(await cluster.haproxyCommand(`set server nodes/${node.name} state maint`)).toBe('\n');
      await load.progresses(10, 60_000);
      // 2. Stopped, as `systemctl stop mariadb`, and started again.
      const stopping = Date.now();
      await node.stop();
      await load.progresses(10, 60_000);
      const stopPause = longestPause(stopping);
      const starting = Date.now();
      const { attempts } = await node.restart(180_000, 3);
      await load.progresses(10, 60_000);
      // 3. Synced: back into HAProxy.
      await cluster.haproxyCommand(`set server nodes/${node.name} state ready`);
      await waitFor(
        `${node.name} UP in HAProxy`,
        async () => (await cluster.haproxyServers())[node.name]?.status === 'UP',
        30_000,
      );
      pauses.push(
        `${node.name}: stop ${stopPause} ms, join ${longestPause(starting)} ms (start ${attempts})`,
      );
    }
  } finally {
    await load.stop();
  }
  // Why the instances answered 503: each database error's code and statement, counted.
  const causes: Record<string, number> = {};
  for (const [i, instance] of instances.entries())
    for (const line of instance.lines.slice(logged[i]))
      if (line.msg === 'database unavailable') {
        const cause = `${line.err?.code ?? line.err?.type}: ${String(line.err?.message).slice(0, 60)}`;
        causes[cause] = (causes[cause] ?? 0) + 1;
      }
  console.log(
    `rolling restart: longest pause between acknowledgements ${pauses.join('; ')}; ${JSON.stringify(Object.fromEntries(load.statuses))}; causes ${JSON.stringify(causes)}`,
  );
  // A transaction whose session was closed before its COMMIT runs again on another node, a read
  // goes once more, the stop and the join pause commits for less than a statement may wait, and
  // the returning node's donor (mariabackup) stays in rotation: no request fails, none is cut.
  expect(Object.fromEntries(load.statuses)).toEqual({ 201: expect.any(Number) });
  expect(causes).toEqual({});
  // HAProxy's check took no node down (which cuts its sessions): each left and came back by steps 1 and 3.
  const checked = fs.readFileSync(cluster.haproxyLog).subarray(haproxyLogged).toString('utf8');
  expect(checked.split('\n').filter((line) => / is DOWN|not serving/.test(line))).toEqual([]);
  await expectNothingLost('rolling', load.creates);
}, 600_000);
