/**
 * Text is stored exactly as sent, or refused: the hardest strings read back unchanged on both
 * databases, and a string that is not valid Unicode (a lone surrogate) or a body that is not
 * valid UTF-8 is a 400 that names the field and stores nothing.
 */
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let key: string;
let projectId: string;
let taskId: string;

beforeAll(async () => {
  api = await startTestService();
  key = await api.createKey('acme');
  projectId = (await api.client(key).POST('/v1/projects', { body: { name: 'text' } })).data!
    .project_id;
  taskId = (
    await api.client(key).POST('/v1/tasks', { body: { project_id: projectId, title: 'text' } })
  ).data!.task_id;
});
afterAll(() => api.stop());

const hardest: Array<[string, string]> = [
  ['a 4-byte emoji', '😀 done'],
  ['a joined emoji (ZWJ sequence)', '👩‍👩‍👧‍👦 family'],
  ['the last code point, U+10FFFF', 'end \u{10FFFF}'],
  ['NUL', 'before\u0000after'],
  ['combining marks', 'e\u0301 a\u0308\u0323'],
  ['right-to-left marks and text', '\u200Fשלום\u200E abc'],
  ['spaces around', '  padded\t\n  '],
  ['500 four-byte emoji (the longest title)', '🚀'.repeat(500)],
];

describe('text round-trips exactly', () => {
  it.each(hardest)('a task title and description with %s', async (_case, text) => {
    const created = await api.send('POST', '/v1/tasks', {
      key,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ project_id: projectId, title: text, description: text }),
    });
    expect(created.status).toBe(201);
    const read = await api.send('GET', `/v1/tasks/${created.json.task_id}`, { key });
    expect([read.json.title, read.json.description]).toEqual([text, text]);
    const stored = await api.service
      .knex('tasks')
      .first('title', 'description')
      .where('task_id', created.json.task_id);
    expect(stored).toEqual({ title: text, description: text });
  });

  it.each(hardest.slice(0, 7))(
    'a project name and description with %s, also after a PATCH',
    async (_case, text) => {
      const created = await api.send('POST', '/v1/projects', {
        key,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'x', description: 'y' }),
      });
      const patched = await api.send('PATCH', `/v1/projects/${created.json.project_id}`, {
        key,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: text, description: text }),
      });
      expect(patched.status).toBe(200);
      const read = await api.send('GET', `/v1/projects/${created.json.project_id}`, { key });
      expect([read.json.name, read.json.description]).toEqual([text, text]);
    },
  );
});

describe('text that cannot be stored as sent is refused', () => {
  const loneSurrogates = ['\\ud800', 'a\\udfffb', '\\ud83d', '\\ude00 end'];

  it.each([
    ['POST', () => '/v1/projects', (s: string) => `{"name": "${s}"}`, '/name'],
    [
      'POST',
      () => '/v1/projects',
      (s: string) => `{"name": "ok", "description": "${s}"}`,
      '/description',
    ],
    [
      'PATCH',
      () => `/v1/projects/${projectId}`,
      (s: string) => `{"description": "${s}"}`,
      '/description',
    ],
    [
      'POST',
      () => '/v1/tasks',
      (s: string) => `{"project_id": "${projectId}", "title": "${s}"}`,
      '/title',
    ],
    [
      'POST',
      () => '/v1/tasks',
      (s: string) => `{"project_id": "${projectId}", "title": "ok", "description": "${s}"}`,
      '/description',
    ],
    ['PATCH', () => `/v1/tasks/${taskId}`, (s: string) => `{"title": "${s}"}`, '/title'],
    [
      'PATCH',
      () => `/v1/tasks/${taskId}`,
      (s: string) => `{"description": "${s}"}`,
      '/description',
    ],
  ])(
    '%s %s with a lone surrogate in %#: 400 naming the field',
    async (method, path, body, pointer) => {
      for (const surrogate of loneSurrogates) {
        const res = await api.send(method, path(), {
          key,
          headers: { 'Content-Type': 'application/json' },
          body: body(surrogate),
        });
        expect([surrogate, res.status, res.json.type]).toEqual([
          surrogate,
          400,
          '/problems/invalid-request',
        ]);
        expect(res.json.errors).toEqual([
          { in: 'body', pointer, message: expect.stringMatching(/not valid Unicode/) },
        ]);
      }
      const task = await api.send('GET', `/v1/tasks/${taskId}`, { key });
      expect([task.json.title, task.json.description]).toEqual(['text', null]);
    },
  );

  it('stores nothing from a refused create', async () => {
    const before = await api.service.knex('projects').count({ n: '*' });
    await api.send('POST', '/v1/projects', {
      key,
      headers: { 'Content-Type': 'application/json' },
      body: '{"name": "x\\ud800"}',
    });
    expect(await api.service.knex('projects').count({ n: '*' })).toEqual(before);
  });

  it.each([
    ['a stray continuation byte', [0x80]],
    ['an overlong encoding', [0xc0, 0xaf]],
    ['an encoded surrogate', [0xed, 0xa0, 0x80]],
    ['a truncated sequence', [0xf0, 0x9f, 0x98]],
    ['a byte that is never UTF-8', [0xff]],
  ])('refuses a body that is not valid UTF-8 (%s) with 400', async (_case, bytes) => {
    const body = Buffer.concat([
      Buffer.from('{"name": "a'),
      Buffer.from(bytes),
      Buffer.from('b"}'),
    ]);
    const res = await api.send('POST', '/v1/projects', {
      key,
      headers: { 'Content-Type': 'application/json' },
      body,
    });
    expect(res.status).toBe(400);
    expect(res.json.type).toBe('/problems/malformed-json');
    expect(res.json.detail).toMatch(/UTF-8/);
  });
});
