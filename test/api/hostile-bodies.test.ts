/**
 * Hostile bodies are refused plainly and never cost a 500: a body nested more than 32 levels deep
 * is a 400 naming the first place past the 32nd level, whatever field it is in; JSON in another
 * charset than UTF-8 is a 415; and a field that holds a huge object or array where the schema
 * takes none is answered as the same field holding an empty one.
 */
import { capturedLog } from '../support/captured-log';
import { startTestService, type TestService } from '../support/test-service';

const log = capturedLog();
let api: TestService;
let key: string;
let projectId: string;
let taskId: string;

beforeAll(async () => {
  api = await startTestService({ logDestination: log.stream });
  key = await api.createKey('acme');
  projectId = (await api.client(key).POST('/v1/projects', { body: { name: 'hostile' } })).data!
    .project_id;
  taskId = (
    await api.client(key).POST('/v1/tasks', { body: { project_id: projectId, title: 't' } })
  ).data!.task_id;
});
afterAll(() => api.stop());

const json = { 'Content-Type': 'application/json' };
const arrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
/** The pointer of `segments`, then `/0` for each array past them. */
const pointerOf = (segments: string[], zeros: number) =>
  segments.map((s) => `/${s}`).join('') + '/0'.repeat(zeros);

async function countRows(): Promise<number[]> {
  const [projects, tasks] = await Promise.all([
    api.service.knex('projects').count({ n: '*' }),
    api.service.knex('tasks').count({ n: '*' }),
  ]);
  return [Number(projects[0].n), Number(tasks[0].n)];
}

describe('a body nested more than 32 levels deep', () => {
  // The body is level 1: 10,000 arrays inside the top-level object reach level 10,001, and the
  // first past the 32nd is the 31st of them.
  const deep = arrays(10_000);
  it.each([
    ['POST', () => '/v1/projects', json, `{"name": ${deep}}`, pointerOf(['name'], 31)],
    [
      'POST',
      () => '/v1/projects',
      json,
      `{"name": "n", "description": "d", "extra": ${deep}}`,
      pointerOf(['extra'], 31),
    ],
    [
      'POST',
      () => '/v1/tasks',
      json,
      () => `{"project_id": "${projectId}", "title": "t", "description": ${deep}}`,
      pointerOf(['description'], 31),
    ],
    [
      'PATCH',
      () => `/v1/tasks/${taskId}`,
      { 'Content-Type': 'application/merge-patch+json' },
      `{"status": ${deep}}`,
      pointerOf(['status'], 31),
    ],
    [
      'PATCH',
      () => `/v1/projects/${projectId}`,
      json,
      `{"name": "n", "x": {"y": ${deep}}}`,
      pointerOf(['x', 'y'], 30),
    ],
    [
      'POST',
      () => '/v1/webhook-endpoints',
      json,
      `{"url": "https://example.com/h", "event_types": ${deep}}`,
      pointerOf(['event_types'], 31),
    ],
    ['POST', () => '/v1/projects', json, deep, pointerOf([], 32)],
  ])(
    '%s %s (case %#) is 400 naming the place, with no fault logged',
    async (method, path, headers, body, pointer) => {
      const before = await countRows();
      const res = await api.send(method, path(), {
        key,
        headers,
        body: typeof body === 'string' ? body : body(),
      });
      expect([res.status, res.json.type]).toEqual([400, '/problems/invalid-request']);
      expect(res.json.errors).toEqual([
        { in: 'body', pointer, message: 'is nested more than 32 levels deep' },
      ]);
      expect(res.json.detail).toContain(pointer);
      expect(await countRows()).toEqual(before);
      expect(log.lines.filter((line) => Number(line.level) >= 50)).toEqual([]);
    },
  );

  it('counts objects as levels too, and names their keys as a JSON pointer spells them', async () => {
    // 40 objects inside one another, each under the key "a/~b": the 33rd level is under 32 keys.
    const body = '{"a/~b": '.repeat(40) + '1' + '}'.repeat(40);
    const res = await api.send('POST', '/v1/projects', { key, headers: json, body });
    expect(res.json.errors).toEqual([
      { in: 'body', pointer: '/a~1~0b'.repeat(32), message: 'is nested more than 32 levels deep' },
    ]);
  });

  it('names the item of an array where the nesting goes too deep, counting items before it', async () => {
    const body = `{"name": "n", "extra": [1, "[", {"k": 2}, ${arrays(40)}]}`;
    const res = await api.send('POST', '/v1/projects', { key, headers: json, body });
    expect(res.json.errors).toEqual([
      {
        in: 'body',
        pointer: '/extra/3' + '/0'.repeat(30),
        message: 'is nested more than 32 levels deep',
      },
    ]);
  });

  it('is told apart from 32 levels exactly, which the schema then judges', async () => {
    const atLimit = await api.send('POST', '/v1/projects', {
      key,
      headers: json,
      body: `{"name": ${arrays(31)}}`,
    });
    expect([atLimit.status, atLimit.json.errors]).toEqual([
      400,
      [{ in: 'body', pointer: '/name', message: 'must be string' }],
    ]);
    const pastIt = await api.send('POST', '/v1/projects', {
      key,
      headers: json,
      body: `{"name": ${arrays(32)}}`,
    });
    expect(pastIt.json.errors).toEqual([
      {
        in: 'body',
        pointer: pointerOf(['name'], 31),
        message: 'is nested more than 32 levels deep',
      },
    ]);
  });

  it('does not count brackets inside strings, escaped quotes included', async () => {
    const text = '[{"\\"' + '['.repeat(100);
    const res = await api.send('POST', '/v1/projects', {
      key,
      headers: json,
      body: JSON.stringify({ name: 'brackets', description: text }),
    });
    expect(res.status).toBe(201);
    expect(res.json.description).toBe(text);
  });

  it('is refused even where the text is not JSON past the deep place', async () => {
    const res = await api.send('POST', '/v1/projects', {
      key,
      headers: json,
      body: `{"name": ${'['.repeat(5000)}`,
    });
    expect([res.status, res.json.errors?.[0]?.pointer]).toEqual([400, pointerOf(['name'], 31)]);
  });
});

describe('JSON in UTF-8 only', () => {
  const body = JSON.stringify({ name: 'é charset' });

  it.each([
    ['utf-16le', Buffer.from(body, 'utf16le')],
    ['UTF-16', Buffer.from(body, 'utf16le')],
    ['latin1', Buffer.from(body, 'latin1')],
    ['iso-8859-1', Buffer.from(body, 'latin1')],
    ['us-ascii', Buffer.from('{"name": "ascii"}')],
    ['"utf-16le"', Buffer.from(body, 'utf16le')],
  ])('charset=%s is 415 and stores nothing', async (charset, bytes) => {
    const before = await countRows();
    const res = await api.send('POST', '/v1/projects', {
      key,
      headers: { 'Content-Type': `application/json; charset=${charset}` },
      body: bytes,
    });
    expect([res.status, res.json.type]).toEqual([415, '/problems/unsupported-media-type']);
    expect(res.json.detail).toMatch(/UTF-8 only/);
    expect(await countRows()).toEqual(before);
  });

  it('a utf-16le body with a trailing odd byte is 415 too, not read short', async () => {
    const res = await api.send('POST', '/v1/projects', {
      key,
      headers: { 'Content-Type': 'application/json; charset=utf-16le' },
      body: Buffer.concat([Buffer.from(body, 'utf16le'), Buffer.from([0x41])]),
    });
    expect(res.status).toBe(415);
  });

  it('on PATCH, in either media type, nothing changes', async () => {
    for (const type of ['application/json', 'application/merge-patch+json']) {
      const res = await api.send('PATCH', `/v1/tasks/${taskId}`, {
        key,
        headers: { 'Content-Type': `${type}; charset=utf-16le` },
        body: Buffer.from('{"title": "changed"}', 'utf16le'),
      });
      expect([type, res.status]).toEqual([type, 415]);
    }
    expect((await api.send('GET', `/v1/tasks/${taskId}`, { key })).json.title).toBe('t');
  });

  it.each(['utf-8', 'UTF-8', 'Utf-8', '"utf-8"'])('charset=%s is taken', async (charset) => {
    const res = await api.send('POST', '/v1/projects', {
      key,
      headers: { 'Content-Type': `application/json;charset=${charset}` },
      body,
    });
    expect([res.status, res.json.name]).toEqual([201, 'é charset']);
  });
});

describe('a field holding a huge object or array where the schema takes none', () => {
  const keys = (count: number) =>
    Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i}`, i]));
  const items = (count: number) => Array.from({ length: count }, (_, i) => i);

  it.each([
    [
      'an unknown field holding 4,000 keys',
      { name: 'n', extra: keys(4000) },
      { name: 'n', extra: {} },
    ],
    [
      'an unknown field holding 10,000 items',
      { name: 'n', extra: items(10_000) },
      { name: 'n', extra: [] },
    ],
    ['a string field holding 4,000 keys', { name: keys(4000) }, { name: {} }],
    [
      'a string field holding 10,000 items, beside another problem',
      { name: items(10_000), description: 5 },
      { name: [], description: 5 },
    ],
    [
      'both, with lone surrogates inside',
      { name: { '\ud800': '\udfff' }, x: ['\ud800'] },
      { name: {}, x: [] },
    ],
  ])('is answered as if it held an empty one: %s', async (_case, sent, emptied) => {
    const res = await api.send('POST', '/v1/projects', {
      key,
      headers: json,
      body: JSON.stringify(sent),
    });
    const expected = await api.send('POST', '/v1/projects', {
      key,
      headers: json,
      body: JSON.stringify(emptied),
    });
    expect([res.status, res.json.errors, res.json.errors_not_listed]).toEqual([
      400,
      expected.json.errors,
      expected.json.errors_not_listed,
    ]);
  });

  it('a field whose schema is an array keeps its items, and they are judged', async () => {
    const res = await api.send('POST', '/v1/webhook-endpoints', {
      key,
      headers: json,
      body: JSON.stringify({
        url: 'https://example.com/h',
        event_types: ['task.created', 'nonsense'],
      }),
    });
    expect(res.json.errors).toEqual([expect.objectContaining({ pointer: '/event_types/1' })]);
  });
});
