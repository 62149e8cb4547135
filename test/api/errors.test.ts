import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let key: string;
let projectId: string;
let taskId: string;

beforeAll(async () => {
  api = await startTestService();
  key = await api.createKey('acme');
  const { data: project } = await api
    .client(key)
    .POST('/v1/projects', { body: { name: 'errors' } });
  projectId = project!.project_id;
  const { data: task } = await api
    .client(key)
    .POST('/v1/tasks', { body: { project_id: projectId, title: 't' } });
  taskId = task!.task_id;
});
afterAll(() => api.stop());

async function countTasks(): Promise<number> {
  const { data } = await api.client(key).GET('/v1/projects/{project_id}/tasks', {
    params: { path: { project_id: projectId }, query: { limit: 200 } },
  });
  return data!.data.length;
}

describe('every error is a problem document with the right status', () => {
  it.each([
    ['POST', '/v1/tasks', '{"project_id": '],
    ['POST', '/v1/projects', "{'name': 'single quotes'}"],
    ['PATCH', '/v1/tasks/{task}', '{"status": "done",}'],
    ['POST', '/v1/projects', '"just a string"'],
    ['POST', '/v1/projects', 'null'],
  ])('%s %s with malformed JSON %s is 400 malformed-json', async (method, path, body) => {
    const before = await countTasks();
    const res = await api.send(method, path.replace('{task}', taskId), {
      key,
      headers: { 'Content-Type': 'application/json' },
      body,
    });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ type: '/problems/malformed-json', status: 400 });
    expect(await countTasks()).toBe(before);
  });

  it.each([
    ['text/plain', 'POST', '/v1/projects'],
    ['application/x-www-form-urlencoded', 'POST', '/v1/projects'],
    ['application/merge-patch+json', 'POST', '/v1/tasks'],
    ['application/xml', 'PATCH', '/v1/tasks/{task}'],
  ])('a %s body on %s %s is 415', async (contentType, method, path) => {
    const res = await api.send(method, path.replace('{task}', taskId), {
      key,
      headers: { 'Content-Type': contentType },
      body: JSON.stringify({ name: 'x', project_id: projectId, title: 't', status: 'done' }),
    });
    expect(res.status).toBe(415);
    expect(res.json.type).toBe('/problems/unsupported-media-type');
    expect(res.json.detail).toContain('application/json');
  });

  it('a body that cannot be decompressed is 400, and one in an unknown encoding is 415', async () => {
    const garbled = await api.send('POST', '/v1/projects', {
      key,
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      body: '{"name":"x"}',
    });
    expect(garbled.status).toBe(400);
    const unknown = await api.send('POST', '/v1/projects', {
      key,
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'lzma' },
      body: '{"name":"x"}',
    });
    expect(unknown.status).toBe(415);
  });

  it('a body on a method that takes none is ignored, however malformed', async () => {
    const { data: task } = await api
      .client(key)
      .POST('/v1/tasks', { body: { project_id: projectId, title: 'to delete' } });
    const res = await api.send('DELETE', `/v1/tasks/${task!.task_id}`, {
      key,
      headers: { 'Content-Type': 'application/json' },
      body: '{not json',
    });
    expect(res.status).toBe(204);
  });

  it('a POST with no Content-Type at all is 415', async () => {
    const res = await api.send('POST', '/v1/projects', { key, body: '{"name":"x"}' });
    expect(res.status).toBe(415);
  });

  it('a body over 64 KiB is 413 and stores nothing; 64 KiB of valid JSON is taken', async () => {
    const before = await countTasks();
    const tooBig = JSON.stringify({
      project_id: projectId,
      title: 't',
      description: 'x'.repeat(64 * 1024),
    });
    const res = await api.send('POST', '/v1/tasks', {
      key,
      headers: { 'Content-Type': 'application/json' },
      body: tooBig,
    });
    expect(res.status).toBe(413);
    expect(res.json.type).toBe('/problems/payload-too-large');
    expect(await countTasks()).toBe(before);
    const justUnder = JSON.stringify({
      project_id: projectId,
      title: 't',
      description: 'x'.repeat(10000),
    }).padEnd(64 * 1024, ' ');
    const ok = await api.send('POST', '/v1/tasks', {
      key,
      headers: { 'Content-Type': 'application/json' },
      body: justUnder,
    });
    expect(ok.status).toBe(201);
  });

  it.each(['/v1/tickets', '/v2/projects', '/v2', '/v1/projects/x/y/z'])(
    'GET %s is 404 route-not-found',
    async (path) => {
      const res = await api.send('GET', path, { key });
      expect(res.status).toBe(404);
      expect(res.json.type).toBe('/problems/route-not-found');
    },
  );

  it.each([
    ['PUT', '/v1/projects', 'GET, POST'],
    ['DELETE', '/v1/projects', 'GET, POST'],
    ['POST', '/v1/projects/{project}', 'DELETE, GET, PATCH'],
    ['PUT', '/v1/tasks/{task}', 'DELETE, GET, PATCH'],
    ['GET', '/v1/tasks', 'POST'],
    ['DELETE', '/v1/projects/{project}/tasks', 'GET'],
  ])('%s %s is 405 with Allow: %s', async (method, path, allow) => {
    const res = await api.send(
      method,
      path.replace('{project}', projectId).replace('{task}', taskId),
      { key },
    );
    expect(res.status).toBe(405);
    expect(res.json.type).toBe('/problems/method-not-allowed');
    expect(res.headers.get('allow')!.split(', ').sort().join(', ')).toBe(allow);
  });

  it('lists the first 20 places with a problem, and counts the rest', async () => {
    const body = JSON.stringify(
      Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`extra${i}`, i])),
    );
    const res = await api.send('POST', '/v1/projects', {
      key,
      headers: { 'Content-Type': 'application/json' },
      body,
    });
    expect(res.status).toBe(400);
    // 300 unknown fields and the missing name.
    expect([res.json.errors.length, res.json.errors_not_listed]).toEqual([20, 281]);
    expect(res.json.detail).toMatch(/; and 281 more places not listed\.$/);
    const few = await api.send('POST', '/v1/projects', {
      key,
      headers: { 'Content-Type': 'application/json' },
      body: '{"name": "", "extra": 1}',
    });
    expect([few.json.errors.length, few.json.errors_not_listed]).toEqual([2, undefined]);
  });

  it('counts a field sent twice once, and lists fields by the names they spell', async () => {
    // 30 unknown fields, each sent twice, one spelt with an escape; the name is there.
    const fields = Array.from({ length: 30 }, (_, i) => `"extra${i}": ${i}`);
    const body = `{"name": "n", "\u0065scaped": 1, ${fields.join(', ')}, ${fields.join(', ')}}`;
    const res = await api.send('POST', '/v1/projects', {
      key,
      headers: { 'Content-Type': 'application/json' },
      body,
    });
    expect(res.status).toBe(400);
    expect([res.json.errors.length, res.json.errors_not_listed]).toEqual([20, 11]);
    expect(res.json.errors[0]).toEqual({
      in: 'body',
      pointer: '/escaped',
      message: expect.any(String),
    });
  });

  it('a body of many unknown fields that is not JSON is 400 malformed-json', async () => {
    const fields = Array.from({ length: 300 }, (_, i) => `"extra${i}": ${i}`).join(', ');
    for (const body of [
      `{${fields},}`,
      `{${fields}`,
      `{${fields}} x`,
      `{"name": 'n', ${fields}}`,
    ]) {
      const res = await api.send('POST', '/v1/projects', {
        key,
        headers: { 'Content-Type': 'application/json' },
        body,
      });
      expect([res.status, res.json.type]).toEqual([400, '/problems/malformed-json']);
    }
  });

  it('a path id that is not a UUID is 400 naming the parameter', async () => {
    const res = await api.send('DELETE', '/v1/projects/12345', { key });
    expect(res.status).toBe(400);
    expect(res.json.errors).toEqual([expect.objectContaining({ in: 'path', name: 'project_id' })]);
  });

  it('an id in upper case is not the lowercase canonical form: 400', async () => {
    const res = await api.send('GET', `/v1/tasks/${taskId.toUpperCase()}`, { key });
    expect(res.status).toBe(400);
  });

  it('survives hostile input without a 500', async () => {
    const attempts: Array<[string, string, string | undefined]> = [
      ['POST', '/v1/projects', JSON.stringify({ name: "'; DROP TABLE projects; --" })],
      ['POST', '/v1/projects', JSON.stringify({ name: 'x', __proto__: { admin: true } })],
      ['POST', '/v1/projects', '{"name": "\\ud800"}'],
      [
        'POST',
        '/v1/tasks',
        JSON.stringify({ project_id: projectId, title: 'x'.repeat(100000) }).slice(0, 60000),
      ],
      ['POST', '/v1/projects', '[]'],
      ['POST', '/v1/projects', '{"name": {"$gt": ""}}'],
      ['PATCH', `/v1/tasks/${taskId}`, JSON.stringify({ status: ['done'] })],
      ['PATCH', `/v1/tasks/${taskId}`, '{"status": "done", "status": "pending"}'],
      ['GET', `/v1/projects/${projectId}/tasks?limit=1e3`, undefined],
      ['GET', `/v1/projects/${projectId}/tasks?limit=-1`, undefined],
      ['GET', `/v1/projects/${projectId}/tasks?limit=5&limit=6`, undefined],
      ['GET', `/v1/projects/${projectId}/tasks?cursor=`, undefined],
      ['GET', `/v1/projects/${projectId}/tasks?sort[]=x`, undefined],
      ['GET', `/v1/projects/${projectId}/tasks?status=done,pending`, undefined],
      ['GET', '/v1/projects/%00', undefined],
      ['GET', '/v1/projects/..%2F..%2Fetc%2Fpasswd', undefined],
      ['GET', '/v1/tasks/%E0%A4%A', undefined],
      ['POST', '/v1/projects', JSON.stringify({ name: 'x', ['f'.repeat(5000)]: 1 })],
      [
        'POST',
        '/v1/projects',
        JSON.stringify(Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`extra${i}`, i]))),
      ],
      ['GET', `/v1/${'a'.repeat(8000)}`, undefined],
      ['DELETE', '/v1/tasks/%', undefined],
      ['GET', '/v1/projects?__proto__=x', undefined],
    ];
    for (const [method, path, body] of attempts) {
      const res = await api.send(method, path, {
        key,
        headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
        body,
      });
      expect([method, path, res.status < 500]).toEqual([method, path, true]);
    }
    const { data } = await api
      .client(key)
      .GET('/v1/projects', { params: { query: { limit: 200 } } });
    expect(data!.data.some((p) => p.name.includes('DROP TABLE'))).toBe(true);
  });
});
