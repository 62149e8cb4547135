/**
 * The planning bench's bulk update: 1,000 tasks of the big tenant changed by one call of POST
 * /v1/tasks/bulk-update with a filter, with a webhook endpoint on the loopback receiver. Its
 * figures: the call's wall time (target < 2 s), when the last of its 1,000 events could be read
 * from the feed, numbered in order, and when they reached the endpoint, against the webhooks
 * bench's targets (p99 < 1 s and the last < 2 s after the writes, none sent twice).
 *
 * The tasks are a project of their own, written straight into the tables beside the seed's and
 * deleted afterwards with it, so the kept database stays as seeded; a run that died before
 * deleting them leaves a project that the next run deletes.
 */
import type { Knex } from 'knex';
import mysql from 'mysql2/promise';
import type { components } from '../../generated/api';
import type { ApiCall } from './api-client';
import { insertTasks, plannedTask, type PlanningDatabase } from './planning-seed';
import type { Receiver } from './receiver';
import { fmt, mark, quantile } from './report';

type Event = components['schemas']['Event'];
type EventPage = components['schemas']['EventPage'];
type TaskBulkResult = components['schemas']['TaskBulkResult'];
type WebhookEndpoint = components['schemas']['WebhookEndpoint'];

export const bulkTasks = 1000;
const projectName = 'bulk update (planning bench)';
const hookPath = '/planning/bulk';
/** The webhooks bench's targets (webhooks-bench.ts). */
const deliveryP99TargetMs = 1000;
const lastDeliveryTargetMs = 2000;
const callTargetMs = 2000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(done: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!(await done()) && performance.now() < deadline) await sleep(10);
  return done();
}

/** A project of `count` tasks of the tenant written straight into the tables: their ids, in order. */
export async function projectOfTasks(
  call: ApiCall,
  database: { url: string; tenantId: string },
  name: string,
  count: number,
): Promise<{ projectId: string; taskIds: string[] }> {
  const { body } = await call<{ project_id: string }>('POST', '/v1/projects', { name }, 201);
  const createdMs = Date.now() - count;
  const tasks = Array.from({ length: count }, (_, n) =>
    plannedTask(n, {
      projectId: body.project_id,
      tenantId: database.tenantId,
      createdMs: createdMs + n,
      rare: false,
    }),
  );
  const connection = await mysql.createConnection(database.url);
  try {
    await insertTasks(connection, tasks);
  } finally {
    await connection.end();
  }
  return { projectId: body.project_id, taskIds: tasks.map((task) => String(task.row[0])) };
}

/** The tenant's events after `cursor` until `count` of them are read (within `timeoutMs`), and when the first and the last came. */
async function readFeed(call: ApiCall, cursor: string, count: number, timeoutMs: number) {
  const events: Event[] = [];
  let firstAt = Infinity;
  const deadline = performance.now() + timeoutMs;
  while (events.length < count && performance.now() < deadline) {
    const { body } = await call<EventPage>(
      'GET',
      `/v1/events?cursor=${encodeURIComponent(cursor)}&limit=200&wait=1`,
    );
    if (body.data.length > 0) firstAt = Math.min(firstAt, performance.now());
    events.push(...body.data);
    cursor = body.next_cursor;
  }
  return { events, firstAt, lastAt: performance.now() };
}

export async function benchBulkUpdate(bench: {
  call: ApiCall;
  knex: Knex;
  database: PlanningDatabase;
  receiver: Receiver;
}): Promise<void> {
  const { call, knex, database, receiver } = bench;
  // What a run that died left: its project (its tasks with it) and its endpoints.
  await knex('projects').where({ tenant_id: database.tenantId, name: projectName }).delete();
  const { body: endpoints } = await call<{ data: WebhookEndpoint[] }>(
    'GET',
    '/v1/webhook-endpoints',
  );
  for (const endpoint of endpoints.data)
    await call('DELETE', `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}`);

  const { projectId, taskIds } = await projectOfTasks(call, database, projectName, bulkTasks);
  const { body: endpoint } = await call<WebhookEndpoint>(
    'POST',
    '/v1/webhook-endpoints',
    { url: receiver.base + hookPath, event_types: ['task.updated'] },
    201,
  );
  const deliveredHere = async () => (await receiver.byPath()).get(hookPath) ?? 0;
  try {
    // One change first, delivered, so that the delivery thread runs (it starts with the first endpoint).
    await call('PATCH', `/v1/tasks/${taskIds[0]}`, { title: 'Warm the deliveries up' });
    if (!(await until(async () => (await deliveredHere()) >= 1, 30_000)))
      throw new Error('the warm-up change was not delivered within 30 s');
    const { body: latest } = await call<EventPage>('GET', '/v1/events?from=latest');
    const twiceBefore = receiver.twice();
    const deliveredBefore = await deliveredHere();

    const sent = performance.now();
    const { body: result, requestId } = await call<TaskBulkResult>(
      'POST',
      '/v1/tasks/bulk-update',
      {
        filter: { project_id: { in: [projectId] } },
        changes: { assignee: 'erin@example.com', labels_add: ['bulk'] },
      },
    );
    const answered = performance.now();
    if (result.matched !== bulkTasks || result.changed !== bulkTasks)
      throw new Error(`bulk-update matched ${result.matched} and changed ${result.changed}`);

    const feed = await readFeed(call, latest.next_cursor, bulkTasks, 30_000);
    const events = feed.events;
    const changedTasks = new Set(
      events.map((event) => (event.data.object as { task_id: string }).task_id),
    );
    const wrong = events.find(
      (event) => event.type !== 'task.updated' || event.request_id !== requestId,
    );
    if (events.length !== bulkTasks || wrong || taskIds.some((id) => !changedTasks.has(id)))
      throw new Error(
        `the feed after the bulk update has ${events.length} events, ${changedTasks.size} tasks` +
          (wrong ? `, ${JSON.stringify(wrong).slice(0, 500)} among them` : ''),
      );
    const inOrder = events.every(
      (event, i) => i === 0 || event.sequence === events[i - 1].sequence + 1,
    );

    const allDelivered = await until(
      async () => (await deliveredHere()) - deliveredBefore >= bulkTasks,
      30_000,
    );
    const { arrivedAt } = await receiver.snapshot();
    const delays = events.map(
      (event) => (arrivedAt.get(`${hookPath} ${event.event_id}`) ?? Infinity) - answered,
    );
    const last = Math.max(...delays);
    const p99 = quantile(delays, 0.99);
    const twice = receiver.twice() - twiceBefore;

    console.log(
      `\n### Bulk update of ${bulkTasks.toLocaleString('en')} tasks by filter (POST /v1/tasks/bulk-update)\n\n` +
        'The tasks of one project (`{"project_id": {"in": [...]}}`) get an assignee and a label; a webhook endpoint for `task.updated` on a loopback receiver answering 204 at once. ' +
        "Times after the call's answer: when the feed (`GET /v1/events`, long-polling) had given all its events, and when each reached the endpoint.\n",
    );
    console.log(
      `| call (< ${fmt(callTargetMs / 1000)} s) | matched / changed | events in the feed, one per task, numbered in order | read from the feed, first / all | delivered p50 / p99 (< ${fmt(deliveryP99TargetMs / 1000)} s) | last (< ${fmt(lastDeliveryTargetMs / 1000)} s) | sent twice |`,
    );
    console.log('|---:|---:|---|---:|---:|---:|---:|');
    console.log(
      `| ${fmt(answered - sent)} ms ${mark(answered - sent < callTargetMs)} | ${result.matched} / ${result.changed} | ` +
        `${events.length}, ${events[0].sequence} to ${events[events.length - 1].sequence} ${mark(inOrder)} | ${fmt(feed.firstAt - answered)} / ${fmt(feed.lastAt - answered)} ms | ` +
        `${fmt(quantile(delays, 0.5))} / ${allDelivered ? `${fmt(p99)} ms` : '**not all within 30 s**'} ${mark(p99 < deliveryP99TargetMs)} | ` +
        `${allDelivered ? `${fmt(last)} ms` : '**never**'} ${mark(last < lastDeliveryTargetMs)} | ${twice} ${mark(twice === 0)} |`,
    );
  } finally {
    await call('DELETE', `/v1/webhook-endpoints/${endpoint.webhook_endpoint_id}`);
    await knex('projects').where('project_id', projectId).delete();
  }
}
