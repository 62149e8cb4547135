import { startTestService, type TestService } from '../support/test-service';

const timestamp = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
let api: TestService;
let key: string;

beforeAll(async () => {
  api = await startTestService();
  key = await api.createKey('acme');
});
afterAll(() => api.stop());

describe('POST /v1/projects', () => {
  it('creates a project with its Location, and the description defaults to ""', async () => {
    const { data, response } = await api
      .client(key)
      .POST('/v1/projects', { body: { name: 'Website relaunch' } });
    expect(response.status).toBe(201);
    expect(Object.keys(data!).sort()).toEqual([
      'created_at',
      'description',
      'name',
      'project_id',
      'updated_at',
    ]);
    expect(data).toMatchObject({ name: 'Website relaunch', description: '' });
    expect(data!.created_at).toMatch(timestamp);
    expect(data!.updated_at).toBe(data!.created_at);
    expect(response.headers.get('location')).toBe(`/v1/projects/${data!.project_id}`);
    const read = await api
      .client(key)
      .GET('/v1/projects/{project_id}', { params: { path: { project_id: data!.project_id } } });
    expect(read.data).toEqual(data);
  });

  it('stores name and description exactly as sent, any Unicode included', async () => {
    const name = '  Lancement 🚀 — 发布\t';
    const description = 'Zeilen\nmit 👩‍👩‍👧 und  doppelten  Leerzeichen ';
    const { data } = await api.client(key).POST('/v1/projects', { body: { name, description } });
    const read = await api
      .client(key)
      .GET('/v1/projects/{project_id}', { params: { path: { project_id: data!.project_id } } });
    expect(read.data).toMatchObject({ name, description });
  });

  it('counts lengths in code points: 200 emoji are a valid name, 201 are not', async () => {
    const ok = await api
      .client(key)
      .POST('/v1/projects', { body: { name: '😀'.repeat(200), description: 'é'.repeat(10000) } });
    expect(ok.response.status).toBe(201);
    expect(ok.data!.name).toBe('😀'.repeat(200));
    const post = (body: unknown) =>
      api.send('POST', '/v1/projects', {
        key,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    const tooLong = await post({ name: '😀'.repeat(201) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.json.errors).toEqual([
      expect.objectContaining({ in: 'body', pointer: '/name' }),
    ]);
    const longDescription = await post({ name: 'x', description: 'é'.repeat(10001) });
    expect(longDescription.json.errors).toEqual([
      expect.objectContaining({ in: 'body', pointer: '/description' }),
    ]);
  });

  it.each([
    ['no name', {}, '/name'],
    ['an empty name', { name: '' }, '/name'],
    ['a name of spaces, tabs and line breaks', { name: ' \t\r\n ' }, '/name'],
    ['a name that is not a string', { name: 42 }, '/name'],
    ['a null description', { name: 'x', description: null }, '/description'],
    ['an unknown field', { name: 'x', owner: 'me' }, '/owner'],
    [
      'a field the service sets',
      { name: 'x', created_at: '2026-11-21T09:30:00.123Z' },
      '/created_at',
    ],
  ])(
    'refuses %s with a 400 naming the field, and creates nothing',
    async (_case, body, pointer) => {
      const before = await api
        .client(key)
        .GET('/v1/projects', { params: { query: { limit: 200 } } });
      const res = await api.send('POST', '/v1/projects', {
        key,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(400);
      expect(res.json.type).toBe('/problems/invalid-request');
      expect(res.json.errors).toContainEqual(expect.objectContaining({ in: 'body', pointer }));
      const after = await api
        .client(key)
        .GET('/v1/projects', { params: { query: { limit: 200 } } });
      expect(after.data!.data).toHaveLength(before.data!.data.length);
    },
  );

  it('reports every problem of a body at once', async () => {
    const res = await api.send('POST', '/v1/projects', {
      key,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: '', description: 7, colour: 'red' }),
    });
    expect(res.status).toBe(400);
    const pointers = res.json.errors.map((e: { pointer: string }) => e.pointer).sort();
    expect(pointers).toEqual(['/colour', '/description', '/name']);
  });
});

describe('GET /v1/projects', () => {
  it("pages through the tenant's projects oldest first, each exactly once", async () => {
    const other = await startTestServiceKey('paging-tenant');
    const created: string[] = [];
    for (let i = 0; i < 7; i++) {
      const { data } = await api.client(other).POST('/v1/projects', { body: { name: `p${i}` } });
      created.push(data!.project_id);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const { data } = await api
        .client(other)
        .GET('/v1/projects', { params: { query: { limit: 3, cursor } } });
      expect(data!.data.length).toBeLessThanOrEqual(3);
      seen.push(...data!.data.map((p) => p.project_id));
      cursor = data!.next_cursor ?? undefined;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(created);
  });

  it('defaults to pages of 50', async () => {
    const tenant = await startTestServiceKey('fifty-tenant');
    for (let i = 0; i < 51; i++)
      await api.client(tenant).POST('/v1/projects', { body: { name: `p${i}` } });
    const { data } = await api.client(tenant).GET('/v1/projects');
    expect(data!.data).toHaveLength(50);
    expect(data!.next_cursor).not.toBeNull();
  });
});

describe('PATCH /v1/projects/{project_id}', () => {
  it('changes the name and description and moves updated_at, not created_at', async () => {
    const { data: project } = await api
      .client(key)
      .POST('/v1/projects', { body: { name: 'old', description: 'd' } });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const { data, response } = await api.client(key).PATCH('/v1/projects/{project_id}', {
      params: { path: { project_id: project!.project_id } },
      body: { name: 'new' },
    });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({
      project_id: project!.project_id,
      name: 'new',
      description: 'd',
      created_at: project!.created_at,
    });
    expect(data!.updated_at > project!.updated_at).toBe(true);
    const described = await api.send('PATCH', `/v1/projects/${project!.project_id}`, {
      key,
      headers: { 'Content-Type': 'application/merge-patch+json' },
      body: JSON.stringify({ description: '' }),
    });
    expect(described.json).toMatchObject({ name: 'new', description: '' });
  });

  it.each([
    ['an empty body', {}],
    ['a null description', { description: null }],
    ['a new id', { project_id: '0193a5b2-7c3e-7d41-9a6b-2f1e4c8d9a01' }],
    ['a blank name', { name: '   ' }],
  ])('refuses %s with a 400 and leaves the project as it was', async (_case, body) => {
    const { data: project } = await api
      .client(key)
      .POST('/v1/projects', { body: { name: 'keep', description: 'me' } });
    const res = await api.send('PATCH', `/v1/projects/${project!.project_id}`, {
      key,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(400);
    const read = await api
      .client(key)
      .GET('/v1/projects/{project_id}', { params: { path: { project_id: project!.project_id } } });
    expect(read.data).toEqual(project);
  });

  it('answers 404 for a project that does not exist', async () => {
    const { error, response } = await api.client(key).PATCH('/v1/projects/{project_id}', {
      params: { path: { project_id: '0193a5b2-7c3e-7d41-9a6b-2f1e4c8d9a01' } },
      body: { name: 'x' },
    });
    expect(response.status).toBe(404);
    expect(error!.type).toBe('/problems/not-found');
  });
});

describe('DELETE /v1/projects/{project_id}', () => {
  it('deletes the project with its tasks; a second delete is 404', async () => {
    const client = api.client(key);
    const { data: project } = await client.POST('/v1/projects', { body: { name: 'doomed' } });
    const { data: task } = await client.POST('/v1/tasks', {
      body: { project_id: project!.project_id, title: 't' },
    });
    const deleted = await client.DELETE('/v1/projects/{project_id}', {
      params: { path: { project_id: project!.project_id } },
    });
    expect(deleted.response.status).toBe(204);
    const again = await client.DELETE('/v1/projects/{project_id}', {
      params: { path: { project_id: project!.project_id } },
    });
    expect(again.response.status).toBe(404);
    const gone = await client.GET('/v1/tasks/{task_id}', {
      params: { path: { task_id: task!.task_id } },
    });
    expect(gone.response.status).toBe(404);
    const tasks = await client.GET('/v1/projects/{project_id}/tasks', {
      params: { path: { project_id: project!.project_id } },
    });
    expect(tasks.response.status).toBe(404);
  });
});

function startTestServiceKey(tenant: string): Promise<string> {
  return api.createKey(tenant);
}
