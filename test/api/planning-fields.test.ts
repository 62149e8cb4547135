/**
 * A task's planning fields, version 2026-12-15 (issue 46, item 1; contract-decisions "Planning
 * with tasks"): `priority`, `due_on`, `labels` and `assignee` on create, PATCH, answers and
 * events (`data.previous` too); labels a set by case fold, kept in their first spelling, sorted
 * by fold, their folds stored beside the task for lookups. In 2026-11-28 the fields are absent
 * everywhere, and sending one is a 400 naming it. Every answer is checked against its version's
 * document.
 */
import { startTestService, type TestService } from '../support/test-service';

const [newest, older] = ['2026-12-15', '2026-11-28'];
let api: TestService;
let key: string;
let projectId: string;

beforeAll(async () => {
  api = await startTestService();
  key = await api.createKey('planning-fields');
  projectId = (await call('POST', '/v1/projects', newest, { name: 'planning' })).json.project_id;
});
afterAll(() => api.stop());

async function call(method: string, path: string, version: string, body?: unknown) {
  const headers: Record<string, string> = { 'Api-Version': version };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  return api.send(method, path, {
    key,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const create = (fields: object, version = newest) =>
  call('POST', '/v1/tasks', version, { project_id: projectId, title: 'plan', ...fields });
const patch = (taskId: string, fields: object, version = newest) =>
  call('PATCH', `/v1/tasks/${taskId}`, version, fields);
const read = async (taskId: string, version = newest) =>
  (await call('GET', `/v1/tasks/${taskId}`, version)).json;
/** The folds stored for the task's labels, as a lookup by label would find them. */
const storedFolds = async (taskId: string) =>
  (
    await api.service
      .knex('task_labels')
      .where('task_id', taskId)
      .orderBy('label_fold')
      .select('label_fold')
  ).map((row: { label_fold: string }) => row.label_fold);

it('creates a task with all four fields and reads it back; without them a task has none', async () => {
  const created = await create({
    priority: 'high',
    due_on: '2026-12-24',
    labels: ['Website', 'ops', 'Ärger'],
    assignee: 'ana@example.com',
  });
  expect(created.status).toBe(201);
  expect(created.json).toMatchObject({
    priority: 'high',
    due_on: '2026-12-24',
    labels: ['ops', 'Website', 'Ärger'],
    assignee: 'ana@example.com',
  });
  expect(await read(created.json.task_id)).toEqual(created.json);
  expect(await storedFolds(created.json.task_id)).toEqual(['ops', 'website', 'ärger']);

  const bare = await create({});
  expect(bare.json).toMatchObject({ priority: 'none', due_on: null, labels: [], assignee: null });
  expect(await storedFolds(bare.json.task_id)).toEqual([]);
});

it('takes labels as a set by case fold: the first spelling kept, a label named twice once, sorted by fold', async () => {
  const task = (await create({ labels: ['Ops', 'ops', 'beta', 'OPS', 'Alpha'] })).json;
  expect(task.labels).toEqual(['Alpha', 'beta', 'Ops']);
  // The set replaces the old; a label the task had keeps its spelling, whatever the new one.
  const replaced = await patch(task.task_id, { labels: ['OPS', 'Straße', 'zeta'] });
  expect(replaced.status).toBe(200);
  expect(replaced.json.labels).toEqual(['Ops', 'Straße', 'zeta']);
  expect(await storedFolds(task.task_id)).toEqual(['ops', 'strasse', 'zeta']);
  // ß folds to ss: STRASSE is the label the task already has.
  expect((await patch(task.task_id, { labels: ['STRASSE'] })).json.labels).toEqual(['Straße']);
  expect((await patch(task.task_id, { labels: [] })).json.labels).toEqual([]);
  expect(await storedFolds(task.task_id)).toEqual([]);
});

it('changes each field with PATCH, null clearing the due date and the assignee', async () => {
  const task = (await create({})).json;
  const steps: Array<[object, object]> = [
    [{ priority: 'urgent' }, { priority: 'urgent' }],
    [{ due_on: '2028-02-29' }, { due_on: '2028-02-29' }],
    [{ assignee: 'Bo' }, { assignee: 'Bo' }],
    [{ labels: ['x'] }, { labels: ['x'] }],
    [
      { priority: 'low', assignee: null },
      { priority: 'low', assignee: null },
    ],
    [{ due_on: null }, { due_on: null }],
  ];
  for (const [sent, shown] of steps) {
    const changed = await patch(task.task_id, sent);
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject(shown);
    expect(await read(task.task_id)).toEqual(changed.json);
  }
  expect(await read(task.task_id)).toMatchObject({
    title: 'plan',
    status: 'pending',
    priority: 'low',
    due_on: null,
    labels: ['x'],
    assignee: null,
  });
});

it('refuses bad values with a 400 naming the place, and changes nothing', async () => {
  const task = (await create({ labels: ['kept'], due_on: '2026-12-01' })).json;
  const labels = (count: number) => Array.from({ length: count }, (_, i) => `label-${i}`);
  const refusals: Array<[object, string]> = [
    [{ labels: labels(21) }, '/labels'],
    [{ labels: ['ok', 'x'.repeat(51)] }, '/labels/1'],
    [{ labels: [' leading'] }, '/labels/0'],
    [{ labels: ['trailing '] }, '/labels/0'],
    [{ labels: ['tab\there'] }, '/labels/0'],
    [{ labels: [''] }, '/labels/0'],
    [{ due_on: '2026-02-30' }, '/due_on'],
    [{ due_on: '2026-12-1' }, '/due_on'],
    [{ priority: 'critical' }, '/priority'],
    [{ assignee: '' }, '/assignee'],
    [{ assignee: 'a'.repeat(201) }, '/assignee'],
  ];
  for (const [sent, pointer] of refusals) {
    for (const answer of [await create(sent), await patch(task.task_id, sent)]) {
      expect([JSON.stringify(sent).slice(0, 60), answer.status]).toEqual([
        JSON.stringify(sent).slice(0, 60),
        400,
      ]);
      expect(answer.json.errors).toContainEqual(expect.objectContaining({ in: 'body', pointer }));
    }
  }
  // Twenty labels, and one of fifty characters, are taken.
  expect((await create({ labels: labels(20) })).status).toBe(201);
  expect((await create({ labels: ['y'.repeat(50)] })).status).toBe(201);
  expect(await read(task.task_id)).toEqual(task);
});

type FeedEvent = {
  type: string;
  data: { object: Record<string, unknown>; previous?: Record<string, unknown> };
};

/** The task's events after `from`, in the reader's version; read until `count` are there. */
async function eventsOf(taskId: string, from: string, version: string, count: number) {
  for (let tries = 0; ; tries++) {
    const page = await call('GET', `/v1/events?cursor=${encodeURIComponent(from)}&wait=1`, version);
    expect(page.status).toBe(200);
    const ours = (page.json.data as FeedEvent[]).filter(
      (event) => event.data.object.task_id === taskId,
    );
    if (ours.length >= count || tries === 20) return ours;
  }
}

it('carries the fields in events, and the changed ones in data.previous', async () => {
  const from = (await call('GET', '/v1/events?from=latest', newest)).json.next_cursor;
  const task = (await create({ priority: 'medium', labels: ['Ops'], assignee: 'ana' })).json;
  await patch(task.task_id, { priority: 'high', labels: ['ops', 'web'] });
  // The same set in another spelling is no change to the labels.
  await patch(task.task_id, { labels: ['WEB', 'OPS'], due_on: '2027-01-15' });
  const [created, first, second] = await eventsOf(task.task_id, from, newest, 3);
  expect(created.type).toBe('task.created');
  expect(created.data.object).toEqual(task);
  expect(first.data.object).toMatchObject({ priority: 'high', labels: ['Ops', 'web'] });
  expect(first.data.previous).toEqual({
    priority: 'medium',
    labels: ['Ops'],
    updated_at: task.updated_at,
  });
  expect(second.data.object).toMatchObject({ labels: ['Ops', 'web'], due_on: '2027-01-15' });
  expect(second.data.previous).toEqual({
    due_on: null,
    updated_at: first.data.object.updated_at,
  });
});

it('shows none of the fields in 2026-11-28, and refuses each one sent there with a 400 naming it', async () => {
  const from = (await call('GET', '/v1/events?from=latest', newest)).json.next_cursor;
  const task = (await create({ priority: 'urgent', due_on: '2026-12-31', labels: ['a'] })).json;
  const fields = ['priority', 'due_on', 'labels', 'assignee'];
  // completed_at is another change's (cancelled-tasks.ts), absent in 2026-11-28 too.
  const without = (object: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(object).filter(([field]) => ![...fields, 'completed_at'].includes(field)),
    );
  expect(await read(task.task_id, older)).toEqual(without(task));
  const list = await call('GET', `/v1/projects/${projectId}/tasks?limit=200`, older);
  for (const shown of list.json.data)
    for (const field of fields) expect(shown).not.toHaveProperty(field);

  const sent = { priority: 'low', due_on: '2027-01-01', labels: ['b'], assignee: 'cy' };
  for (const [field, value] of Object.entries(sent)) {
    for (const answer of [
      await create({ [field]: value }, older),
      await patch(task.task_id, { [field]: value }, older),
    ]) {
      expect(answer.status).toBe(400);
      expect(answer.json.errors).toEqual([
        expect.objectContaining({ in: 'body', pointer: `/${field}` }),
      ]);
      expect(answer.json.detail).toContain(
        'It is valid in API version 2026-12-15: send Api-Version: 2026-12-15 to use it.',
      );
    }
  }
  // A 2026-11-28 change leaves the fields as they were; its events show none of them, and an
  // update of the fields alone is still an event there, with only updated_at before.
  const renamed = await patch(task.task_id, { title: 'renamed' }, older);
  expect(renamed.json).toEqual({
    ...without(task),
    title: 'renamed',
    updated_at: expect.any(String),
  });
  expect(await read(task.task_id)).toMatchObject({ priority: 'urgent', labels: ['a'] });
  await patch(task.task_id, { assignee: 'dee' });
  const events = await eventsOf(task.task_id, from, older, 3);
  expect(events.map((event) => event.type)).toEqual([
    'task.created',
    'task.updated',
    'task.updated',
  ]);
  for (const event of events) {
    for (const field of fields) {
      expect(event.data.object).not.toHaveProperty(field);
      expect(event.data.previous ?? {}).not.toHaveProperty(field);
    }
  }
  expect(events[2].data.previous).toEqual({ updated_at: renamed.json.updated_at });
});
