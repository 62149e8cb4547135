import type { components } from '../../generated/api';
import { loadDocument } from '../../src/http/document';
import { startTestService, type TestService } from '../support/test-service';

type Task = components['schemas']['Task'];
type TaskStatus = components['schemas']['TaskStatus'];
type Sort = 'created_at' | '-created_at' | 'updated_at' | '-updated_at';

let api: TestService;
let key: string;

beforeAll(async () => {
  api = await startTestService();
  key = await api.createKey('acme');
});
afterAll(() => api.stop());

async function newProject(): Promise<string> {
  const { data } = await api.client(key).POST('/v1/projects', { body: { name: 'list' } });
  return data!.project_id;
}

async function addTasks(projectId: string, count: number): Promise<Task[]> {
  const tasks: Task[] = [];
  for (let i = 0; i < count; i++) {
    const { data } = await api
      .client(key)
      .POST('/v1/tasks', { body: { project_id: projectId, title: `task ${i}` } });
    tasks.push(data!);
  }
  return tasks;
}

async function walk(
  projectId: string,
  query: { limit: number; sort?: Sort; status?: TaskStatus[] },
  between?: () => Promise<void>,
) {
  const seen: Task[] = [];
  let cursor: string | undefined;
  do {
    const { data, response } = await api.client(key).GET('/v1/projects/{project_id}/tasks', {
      params: { path: { project_id: projectId }, query: { ...query, cursor } },
    });
    expect(response.status).toBe(200);
    expect(data!.data.length).toBeLessThanOrEqual(query.limit);
    seen.push(...data!.data);
    cursor = data!.next_cursor ?? undefined;
    if (cursor && between) await between();
  } while (cursor);
  return seen;
}

const byKey = (sort: Sort) => (a: Task, b: Task) => {
  const column = sort.replace('-', '') as 'created_at' | 'updated_at';
  const order =
    a[column] === b[column] ? (a.task_id < b.task_id ? -1 : 1) : a[column] < b[column] ? -1 : 1;
  return sort.startsWith('-') ? -order : order;
};

describe('GET /v1/projects/{project_id}/tasks', () => {
  it('answers a page shape with next_cursor null on the last page', async () => {
    const projectId = await newProject();
    const [task] = await addTasks(projectId, 1);
    const { data } = await api
      .client(key)
      .GET('/v1/projects/{project_id}/tasks', { params: { path: { project_id: projectId } } });
    expect(data).toEqual({ data: [task], next_cursor: null });
  });

  it('answers an empty page for a project with no tasks', async () => {
    const { data } = await api.client(key).GET('/v1/projects/{project_id}/tasks', {
      params: { path: { project_id: await newProject() } },
    });
    expect(data).toEqual({ data: [], next_cursor: null });
  });

  it.each(['created_at', '-created_at', 'updated_at', '-updated_at'] as Sort[])(
    'walks every task exactly once in %s order, ties broken by id',
    async (sort) => {
      const projectId = await newProject();
      const tasks = await addTasks(projectId, 9);
      // Give updated_at an order of its own that differs from creation order.
      for (const task of [tasks[4], tasks[1], tasks[7]]) {
        const { data } = await api.client(key).PATCH('/v1/tasks/{task_id}', {
          params: { path: { task_id: task.task_id } },
          body: { status: 'in_progress' },
        });
        tasks[tasks.indexOf(task)] = data!;
      }
      const seen = await walk(projectId, { limit: 2, sort });
      expect(seen.map((t) => t.task_id)).toEqual(
        [...tasks].sort(byKey(sort)).map((t) => t.task_id),
      );
    },
  );

  it.each(['created_at', '-created_at', 'updated_at', '-updated_at'] as Sort[])(
    'walks the tasks of two statuses exactly once in %s order, merged across pages',
    async (sort) => {
      const projectId = await newProject();
      const tasks = await addTasks(projectId, 9);
      const statuses: TaskStatus[] = ['done', 'in_progress', 'pending'];
      // Changed in a scrambled order, so updated_at disagrees with creation order.
      for (const i of [4, 1, 7, 0, 8, 2, 6, 3, 5]) {
        const { data } = await api.client(key).PATCH('/v1/tasks/{task_id}', {
          params: { path: { task_id: tasks[i].task_id } },
          body: { status: statuses[i % 3] },
        });
        tasks[i] = data!;
      }
      const seen = await walk(projectId, { limit: 2, sort, status: ['pending', 'done'] });
      const expected = tasks.filter((t) => t.status !== 'in_progress').sort(byKey(sort));
      expect(seen.map((t) => t.task_id)).toEqual(expected.map((t) => t.task_id));
    },
  );

  it('filters by one status or several', async () => {
    const projectId = await newProject();
    const tasks = await addTasks(projectId, 6);
    const statuses: TaskStatus[] = [
      'pending',
      'in_progress',
      'done',
      'done',
      'in_progress',
      'pending',
    ];
    for (const [i, status] of statuses.entries()) {
      const { data } = await api.client(key).PATCH('/v1/tasks/{task_id}', {
        params: { path: { task_id: tasks[i].task_id } },
        body: { status },
      });
      tasks[i] = data!;
    }
    const done = await walk(projectId, { limit: 1, status: ['done'] });
    expect(done.map((t) => t.task_id)).toEqual([tasks[2].task_id, tasks[3].task_id]);
    const open = await walk(projectId, { limit: 3, status: ['pending', 'in_progress'] });
    expect(open.map((t) => t.task_id)).toEqual([0, 1, 4, 5].map((i) => tasks[i].task_id));
    const raw = await api.send(
      'GET',
      `/v1/projects/${projectId}/tasks?status=done&status=pending`,
      { key },
    );
    expect(raw.json.data.map((t: Task) => t.status).sort()).toEqual([
      'done',
      'done',
      'pending',
      'pending',
    ]);
  });

  it('returns every task exactly once while tasks are created and deleted during the walk', async () => {
    const projectId = await newProject();
    const tasks = await addTasks(projectId, 10);
    const deleted = new Set<string>();
    const created: Task[] = [];
    let step = 0;
    const seen = await walk(projectId, { limit: 3 }, async () => {
      // Delete one task from ahead of the walk and one behind it, and add one at the end.
      const ahead = tasks[9 - step];
      const behind = tasks[step];
      for (const task of [ahead, behind]) {
        if (!deleted.has(task.task_id)) {
          await api.send('DELETE', `/v1/tasks/${task.task_id}`, { key });
          deleted.add(task.task_id);
        }
      }
      created.push(...(await addTasks(projectId, 1)));
      step++;
    });
    const ids = seen.map((t) => t.task_id);
    expect(new Set(ids).size).toBe(ids.length);
    const remaining = [...tasks, ...created]
      .filter((t) => !deleted.has(t.task_id))
      .map((t) => t.task_id);
    for (const id of remaining) expect(ids).toContain(id);
    for (const id of ids) expect(remaining.includes(id) || deleted.has(id)).toBe(true);
  });

  it('defaults to pages of 50 and takes up to 200', async () => {
    const projectId = await newProject();
    await addTasks(projectId, 201);
    const first = await api
      .client(key)
      .GET('/v1/projects/{project_id}/tasks', { params: { path: { project_id: projectId } } });
    expect(first.data!.data).toHaveLength(50);
    const big = await api.client(key).GET('/v1/projects/{project_id}/tasks', {
      params: { path: { project_id: projectId }, query: { limit: 200 } },
    });
    expect(big.data!.data).toHaveLength(200);
    expect(big.data!.next_cursor).not.toBeNull();
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=ten', 'limit'],
    ['sort=title', 'sort'],
    ['status=blocked', 'status'],
    ['page=2', 'page'],
  ])('refuses %s with a 400 naming the parameter', async (query, name) => {
    const res = await api.send('GET', `/v1/projects/${await newProject()}/tasks?${query}`, { key });
    expect(res.status).toBe(400);
    expect(res.json.type).toBe('/problems/invalid-request');
    expect(res.json.errors).toEqual([expect.objectContaining({ in: 'query', name })]);
  });

  it.each([
    ['not base64 JSON', 'bm90IGpzb24'],
    ['garbage', '%%%'],
    [
      'JSON of the wrong shape',
      Buffer.from('{"s":"created_at","at":1,"id":"x"}').toString('base64url'),
    ],
  ])('refuses a cursor that is %s with 400 invalid-cursor', async (_case, cursor) => {
    const res = await api.send(
      'GET',
      `/v1/projects/${await newProject()}/tasks?cursor=${encodeURIComponent(cursor)}`,
      { key },
    );
    expect(res.status).toBe(400);
    expect(res.json.type).toBe('/problems/invalid-cursor');
  });

  it('refuses a cursor made for another sort', async () => {
    const projectId = await newProject();
    await addTasks(projectId, 2);
    const { data } = await api.client(key).GET('/v1/projects/{project_id}/tasks', {
      params: { path: { project_id: projectId }, query: { limit: 1 } },
    });
    const res = await api.send(
      'GET',
      `/v1/projects/${projectId}/tasks?sort=-created_at&cursor=${data!.next_cursor}`,
      { key },
    );
    expect(res.status).toBe(400);
    expect(res.json.type).toBe('/problems/invalid-cursor');
    expect(res.json.detail).toMatch(/sort/);
  });

  it.each(['0x10', '1e1', '+5', '5.0', ' 5', '5 ', '-1', ''])(
    'refuses limit=%j: integers are plain decimal digits',
    async (limit) => {
      const res = await api.send(
        'GET',
        `/v1/projects/${await newProject()}/tasks?limit=${encodeURIComponent(limit)}`,
        { key },
      );
      expect(res.status).toBe(400);
      expect(res.json.type).toBe('/problems/invalid-request');
      expect(res.json.errors).toEqual([expect.objectContaining({ in: 'query', name: 'limit' })]);
    },
  );

  it('counts a status given twice once', async () => {
    const projectId = await newProject();
    const [task] = await addTasks(projectId, 1);
    const res = await api.send(
      'GET',
      `/v1/projects/${projectId}/tasks?status=pending&status=pending&status=pending&status=pending`,
      { key },
    );
    expect(res.status).toBe(200);
    expect(res.json.data.map((t: Task) => t.task_id)).toEqual([task.task_id]);
  });

  it.each(['9999-99-99 99:99:99.999', '2026-02-30 10:00:00.000', '2026-11-21 24:00:00.000'])(
    'refuses a cursor at %j, a position no task can have, with 400 invalid-cursor',
    async (at) => {
      const cursor = Buffer.from(
        JSON.stringify({ s: 'created_at', at, id: '0193a5b3-5a71-7f02-b4d6-0e1f2a3b4c5d' }),
      ).toString('base64url');
      const res = await api.send(
        'GET',
        `/v1/projects/${await newProject()}/tasks?cursor=${cursor}`,
        { key },
      );
      expect(res.status).toBe(400);
      expect(res.json.type).toBe('/problems/invalid-cursor');
    },
  );

  it("takes the document's example cursor", async () => {
    const parameters = loadDocument().definition.components!.parameters as Record<
      string,
      { example?: string }
    >;
    const res = await api.send(
      'GET',
      `/v1/projects/${await newProject()}/tasks?cursor=${parameters.Cursor.example}`,
      { key },
    );
    expect(res.status).toBe(200);
  });

  it('answers 404 for a project that does not exist', async () => {
    const res = await api.send('GET', '/v1/projects/0193a5b2-7c3e-7d41-9a6b-2f1e4c8d9a01/tasks', {
      key,
    });
    expect(res.status).toBe(404);
  });
});
