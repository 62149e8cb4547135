import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let key: string;

beforeAll(async () => {
  api = await startTestService();
  key = await api.createKey('acme');
});
afterAll(() => api.stop());

const projectCount = async () =>
  Number((await api.service.knex('projects').count({ n: '*' }))[0].n);

describe('bearer API keys', () => {
  it('refuses a request with no key: 401, WWW-Authenticate: Bearer, and the handler never runs', async () => {
    const before = await projectCount();
    const res = await api.send('POST', '/v1/projects', {
      headers: { 'Content-Type': 'application/json' },
      body: '{"name":"sneaky"}',
    });
    expect(res.status).toBe(401);
    expect(res.json.type).toBe('/problems/unauthenticated');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
    expect(res.headers.get('www-authenticate')).not.toMatch(/invalid_token/);
    expect(await projectCount()).toBe(before);
  });

  it('answers 401 before validating: an invalid body with no key is still 401', async () => {
    const res = await api.send('POST', '/v1/tasks', {
      headers: { 'Content-Type': 'application/json' },
      body: '{"bogus":1}',
    });
    expect(res.status).toBe(401);
  });

  it.each([
    ['an unknown key', `Bearer tt_${'A'.repeat(43)}`],
    ['a malformed key', 'Bearer not-a-key'],
    ['another scheme', `Basic ${Buffer.from('user:pass').toString('base64')}`],
    ['a bare key without the scheme', `tt_${'A'.repeat(43)}`],
    ['an empty bearer', 'Bearer '],
  ])('refuses %s with 401 invalid_token', async (_case, authorization) => {
    const res = await api.send('GET', '/v1/projects', {
      headers: { Authorization: authorization },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
  });

  it.each([
    [
      'a bare key',
      `tt_${'A'.repeat(43)}`,
      'The Authorization header has no scheme: send Authorization: Bearer <API_KEY> (the word Bearer, a space, then the key).',
    ],
    [
      'a key under another scheme',
      `Basic ${Buffer.from('user:pass').toString('base64')}`,
      'The Authorization header uses the Basic scheme; this API takes Bearer: send Authorization: Bearer <API_KEY>.',
    ],
    ['a wrong key', `Bearer tt_${'A'.repeat(43)}`, 'The API key is malformed, unknown or revoked.'],
  ])('tells %s apart from the others in plain words', async (_case, authorization, detail) => {
    const res = await api.send('GET', '/v1/projects', {
      headers: { Authorization: authorization },
    });
    expect(res.json.detail).toBe(detail);
    expect(res.headers.get('www-authenticate')).toContain(`error_description="${detail}"`);
  });

  it('refuses a key once it is revoked, and only that key', async () => {
    const doomed = await api.createKey('acme');
    expect((await api.send('GET', '/v1/projects', { key: doomed })).status).toBe(200);
    const [{ key_id }] = (await api.repositories.apiKeys.list()).slice(-1);
    expect(await api.repositories.apiKeys.revoke(key_id)).toBe(true);
    const res = await api.send('GET', '/v1/projects', { key: doomed });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/invalid_token/);
    expect((await api.send('GET', '/v1/projects', { key })).status).toBe(200);
  });

  it('lets a read-only key read but not write: 403 insufficient_scope', async () => {
    const reader = await api.createKey('acme', ['read']);
    const { data: project } = await api
      .client(key)
      .POST('/v1/projects', { body: { name: 'shared' } });
    expect(
      (
        await api.client(reader).GET('/v1/projects/{project_id}', {
          params: { path: { project_id: project!.project_id } },
        })
      ).response.status,
    ).toBe(200);
    const writes = [
      api.client(reader).POST('/v1/projects', { body: { name: 'x' } }),
      api.client(reader).PATCH('/v1/projects/{project_id}', {
        params: { path: { project_id: project!.project_id } },
        body: { name: 'x' },
      }),
      api.client(reader).DELETE('/v1/projects/{project_id}', {
        params: { path: { project_id: project!.project_id } },
      }),
      api
        .client(reader)
        .POST('/v1/tasks', { body: { project_id: project!.project_id, title: 't' } }),
    ];
    for (const { response, error } of await Promise.all(writes)) {
      expect(response.status).toBe(403);
      expect(error!.type).toBe('/problems/insufficient-scope');
      expect(response.headers.get('www-authenticate')).toMatch(/error="insufficient_scope"/);
    }
    const read = await api
      .client(key)
      .GET('/v1/projects/{project_id}', { params: { path: { project_id: project!.project_id } } });
    expect(read.data).toEqual(project);
  });

  it('lets a write-only key write but not read', async () => {
    const writer = await api.createKey('acme', ['write']);
    const { response, data } = await api
      .client(writer)
      .POST('/v1/projects', { body: { name: 'w' } });
    expect(response.status).toBe(201);
    const read = await api
      .client(writer)
      .GET('/v1/projects/{project_id}', { params: { path: { project_id: data!.project_id } } });
    expect(read.response.status).toBe(403);
  });
});

describe('tenant isolation', () => {
  it("answers 404 for another tenant's project and tasks, exactly as for ones that do not exist, and changes nothing", async () => {
    const owner = api.client(key);
    const intruderKey = await api.createKey('globex');
    const intruder = api.client(intruderKey);
    const { data: project } = await owner.POST('/v1/projects', {
      body: { name: 'secret', description: 'acme only' },
    });
    const { data: task } = await owner.POST('/v1/tasks', {
      body: { project_id: project!.project_id, title: 'secret task' },
    });
    const project_id = project!.project_id;
    const task_id = task!.task_id;

    const attempts = await Promise.all([
      intruder.GET('/v1/projects/{project_id}', { params: { path: { project_id } } }),
      intruder.PATCH('/v1/projects/{project_id}', {
        params: { path: { project_id } },
        body: { name: 'mine' },
      }),
      intruder.DELETE('/v1/projects/{project_id}', { params: { path: { project_id } } }),
      intruder.GET('/v1/projects/{project_id}/tasks', { params: { path: { project_id } } }),
      intruder.GET('/v1/tasks/{task_id}', { params: { path: { task_id } } }),
      intruder.PATCH('/v1/tasks/{task_id}', {
        params: { path: { task_id } },
        body: { status: 'done' },
      }),
      intruder.DELETE('/v1/tasks/{task_id}', { params: { path: { task_id } } }),
    ]);
    for (const { response, error } of attempts) {
      expect(response.status).toBe(404);
      expect(error!.type).toBe('/problems/not-found');
      expect(JSON.stringify(error)).not.toContain('secret');
    }
    const intoForeignProject = await intruder.POST('/v1/tasks', {
      body: { project_id, title: 'planted' },
    });
    expect(intoForeignProject.response.status).toBe(422);

    const listed = await intruder.GET('/v1/projects');
    expect(listed.data!.data.map((p) => p.project_id)).not.toContain(project_id);
    expect(
      (await owner.GET('/v1/projects/{project_id}', { params: { path: { project_id } } })).data,
    ).toEqual(project);
    expect(
      (await owner.GET('/v1/tasks/{task_id}', { params: { path: { task_id } } })).data,
    ).toEqual(task);
    const tasks = await owner.GET('/v1/projects/{project_id}/tasks', {
      params: { path: { project_id } },
    });
    expect(tasks.data!.data).toEqual([task]);
  });
});
