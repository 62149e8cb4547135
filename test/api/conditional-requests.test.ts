import { loadDocument } from '../../src/http/document';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let key: string;
let projectId: string;

beforeAll(async () => {
  api = await startTestService();
  key = await api.createKey('acme');
  const { data } = await api.client(key).POST('/v1/projects', { body: { name: 'etags' } });
  projectId = data!.project_id;
});
afterAll(() => api.stop());

async function newTask() {
  const { data, response } = await api
    .client(key)
    .POST('/v1/tasks', { body: { project_id: projectId, title: 't' } });
  return { task: data!, etag: response.headers.get('etag')! };
}

const taskPath = (taskId: string) => ({ params: { path: { task_id: taskId } } });

describe('ETags', () => {
  it('gives created and read resources a strong ETag that changes with every change', async () => {
    const { task, etag } = await newTask();
    expect(etag).toMatch(/^"[^"]+"$/);
    const read = await api.client(key).GET('/v1/tasks/{task_id}', taskPath(task.task_id));
    expect(read.response.headers.get('etag')).toBe(etag);
    const etags = new Set([etag]);
    for (const status of ['in_progress', 'in_progress', 'done'] as const) {
      const { response } = await api
        .client(key)
        .PATCH('/v1/tasks/{task_id}', { ...taskPath(task.task_id), body: { status } });
      etags.add(response.headers.get('etag')!);
    }
    expect(etags.size).toBe(4);
    const project = await api
      .client(key)
      .GET('/v1/projects/{project_id}', { params: { path: { project_id: projectId } } });
    expect(project.response.headers.get('etag')).toMatch(/^"[^"]+"$/);
  });

  it('answers If-None-Match with 304 and no body while the ETag is current, 200 once it is not', async () => {
    const { task, etag } = await newTask();
    for (const ifNoneMatch of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
      const res = await api.send('GET', `/v1/tasks/${task.task_id}`, {
        key,
        headers: { 'If-None-Match': ifNoneMatch },
      });
      expect([ifNoneMatch, res.status, res.text]).toEqual([ifNoneMatch, 304, '']);
      expect(res.headers.get('etag')).toBe(etag);
    }
    await api
      .client(key)
      .PATCH('/v1/tasks/{task_id}', { ...taskPath(task.task_id), body: { title: 'changed' } });
    const res = await api.send('GET', `/v1/tasks/${task.task_id}`, {
      key,
      headers: { 'If-None-Match': etag },
    });
    expect(res.status).toBe(200);
    expect(res.json.title).toBe('changed');
  });
});

describe('If-Match', () => {
  it('lets one of two clients that read the same ETag win; the other gets 412 and changes nothing', async () => {
    const { task, etag } = await newTask();
    const patch = (title: string) =>
      api.send('PATCH', `/v1/tasks/${task.task_id}`, {
        key,
        headers: { 'Content-Type': 'application/json', 'If-Match': etag },
        body: JSON.stringify({ title }),
      });
    const [first, second] = await Promise.all([patch('from A'), patch('from B')]);
    expect([first.status, second.status].sort()).toEqual([200, 412]);
    const [winner, loser] = first.status === 200 ? [first, second] : [second, first];
    expect(loser.json.type).toBe('/problems/precondition-failed');
    const read = await api.client(key).GET('/v1/tasks/{task_id}', taskPath(task.task_id));
    expect(read.data!.title).toBe(winner.json.title);
    expect(read.response.headers.get('etag')).toBe(winner.headers.get('etag'));
  });

  it('applies every one of many simultaneous changes without If-Match, each answered with the task as it left it', async () => {
    const { task } = await newTask();
    const titles = Array.from({ length: 12 }, (_, i) => `change ${i}`);
    const answers = await Promise.all(
      titles.map((title) =>
        api
          .client(key)
          .PATCH('/v1/tasks/{task_id}', { ...taskPath(task.task_id), body: { title } }),
      ),
    );
    expect(answers.map((a) => a.response.status)).toEqual(titles.map(() => 200));
    // Each change made its own version: twelve distinct ETags, none the creation's.
    const etags = answers.map((a) => a.response.headers.get('etag'));
    expect(new Set(etags).size).toBe(titles.length);
    const read = await api.client(key).GET('/v1/tasks/{task_id}', taskPath(task.task_id));
    const last = answers.find(
      (a) => a.response.headers.get('etag') === read.response.headers.get('etag'),
    )!;
    expect(read.data!.title).toBe(last.data!.title);
  });

  it('applies a change whose If-Match is current, or *', async () => {
    const { task, etag } = await newTask();
    const res = await api.send('PATCH', `/v1/tasks/${task.task_id}`, {
      key,
      headers: { 'Content-Type': 'application/json', 'If-Match': `"other", ${etag}` },
      body: JSON.stringify({ status: 'done' }),
    });
    expect(res.status).toBe(200);
    const star = await api.send('PATCH', `/v1/tasks/${task.task_id}`, {
      key,
      headers: { 'Content-Type': 'application/json', 'If-Match': '*' },
      body: JSON.stringify({ status: 'pending' }),
    });
    expect(star.status).toBe(200);
  });

  it('refuses a weak ETag in If-Match: changes need the strong one', async () => {
    const { task, etag } = await newTask();
    const res = await api.send('PATCH', `/v1/tasks/${task.task_id}`, {
      key,
      headers: { 'Content-Type': 'application/json', 'If-Match': `W/${etag}` },
      body: JSON.stringify({ status: 'done' }),
    });
    expect(res.status).toBe(412);
  });

  it('deletes only with a current If-Match; a stale one is 412 and the task stays', async () => {
    const { task, etag } = await newTask();
    await api
      .client(key)
      .PATCH('/v1/tasks/{task_id}', { ...taskPath(task.task_id), body: { status: 'done' } });
    const stale = await api.send('DELETE', `/v1/tasks/${task.task_id}`, {
      key,
      headers: { 'If-Match': etag },
    });
    expect(stale.status).toBe(412);
    const read = await api.client(key).GET('/v1/tasks/{task_id}', taskPath(task.task_id));
    expect(read.response.status).toBe(200);
    const current = await api.send('DELETE', `/v1/tasks/${task.task_id}`, {
      key,
      headers: { 'If-Match': read.response.headers.get('etag')! },
    });
    expect(current.status).toBe(204);
  });

  it('guards project changes and deletion the same way', async () => {
    const { data: project, response } = await api
      .client(key)
      .POST('/v1/projects', { body: { name: 'guarded' } });
    const etag = response.headers.get('etag')!;
    const path = `/v1/projects/${project!.project_id}`;
    const renamed = await api.send('PATCH', path, {
      key,
      headers: { 'Content-Type': 'application/json', 'If-Match': etag },
      body: JSON.stringify({ name: 'renamed' }),
    });
    expect(renamed.status).toBe(200);
    const stale = await api.send('PATCH', path, {
      key,
      headers: { 'Content-Type': 'application/json', 'If-Match': etag },
      body: JSON.stringify({ name: 'lost' }),
    });
    expect(stale.status).toBe(412);
    expect((await api.send('DELETE', path, { key, headers: { 'If-Match': etag } })).status).toBe(
      412,
    );
    expect((await api.send('GET', path, { key })).json.name).toBe('renamed');
    expect(
      (
        await api.send('DELETE', path, {
          key,
          headers: { 'If-Match': renamed.headers.get('etag')! },
        })
      ).status,
    ).toBe(204);
  });

  it('answers 404, not 412, for a task that does not exist', async () => {
    const res = await api.send('DELETE', '/v1/tasks/0193a5b3-1d20-7e55-8c3f-6a7b8c9d0e12', {
      key,
      headers: { 'If-Match': '"1"' },
    });
    expect(res.status).toBe(404);
  });
});

describe('webhook endpoints', () => {
  it('carry an ETag that changes with every change, a rotation and a disabling by the service included, and guard PATCH and DELETE with it', async () => {
    // A tenant of its own, which changes nothing else: no delivery is ever planned to the
    // endpoint's (public, never reached) address, and no outcome writes its row meanwhile.
    const key = await api.createKey('etag-endpoints');
    const json = { 'Content-Type': 'application/json' };
    const created = await api.send('POST', '/v1/webhook-endpoints', {
      key,
      headers: json,
      body: JSON.stringify({ url: 'https://93.184.215.14/etag' }),
    });
    expect(created.status).toBe(201);
    const path = `/v1/webhook-endpoints/${created.json.webhook_endpoint_id}`;
    const first = created.headers.get('etag')!;
    expect(first).toMatch(/^"[^"]+"$/);
    const read = await api.send('GET', path, { key });
    expect(read.headers.get('etag')).toBe(first);
    expect((await api.send('GET', path, { key, headers: { 'If-None-Match': first } })).status).toBe(
      304,
    );
    const patch = (body: unknown, ifMatch: string) =>
      api.send('PATCH', path, {
        key,
        headers: { ...json, 'If-Match': ifMatch },
        body: JSON.stringify(body),
      });
    const changed = await patch({ description: 'first' }, first);
    expect(changed.status).toBe(200);
    const second = changed.headers.get('etag')!;
    expect(second).not.toBe(first);
    // A client still holding the first ETag changes nothing.
    const stale = await patch({ description: 'stale' }, first);
    expect([stale.status, stale.json.type]).toEqual([412, '/problems/precondition-failed']);
    expect((await api.send('GET', path, { key })).json.description).toBe('first');
    // A rotation, and a disabling by the service, are changes too.
    expect((await api.send('POST', `${path}/rotate-secret`, { key })).status).toBe(200);
    const rotated = (await api.send('GET', path, { key })).headers.get('etag')!;
    expect(rotated).not.toBe(second);
    await api.service
      .knex('webhook_endpoints')
      .where('webhook_endpoint_id', created.json.webhook_endpoint_id)
      .update({
        enabled: false,
        disabled_reason: 'gone',
        version: api.service.knex.raw('version + 1'),
      });
    const disabled = await api.send('GET', path, { key });
    expect(disabled.headers.get('etag')).not.toBe(rotated);
    expect((await api.send('DELETE', path, { key, headers: { 'If-Match': rotated } })).status).toBe(
      412,
    );
    expect(
      (
        await api.send('DELETE', path, {
          key,
          headers: { 'If-Match': disabled.headers.get('etag')! },
        })
      ).status,
    ).toBe(204);
  });
});

describe('a condition that is not one', () => {
  const malformed = ['2', '3, 4', '"3', 'W/3', '"3" "4"', 'w/"3"', '**', '"3"; x', ',', '"3", *'];
  const wellFormed = ['"3"', '*', ' * ', 'W/"3"', '"x,y", "3"', ',"3",,', '"a"\t,\t"3"', '""'];

  it('is told by the document with a pattern (what testers and the mock read), not only in prose', () => {
    const { components } = loadDocument().definition;
    const schema = components!.schemas!.EntityTagList as { pattern: string };
    // ajv's flag: a JSON Schema pattern is a Unicode regular expression.
    const pattern = new RegExp(schema.pattern, 'u');
    expect(malformed.filter((value) => pattern.test(value))).toEqual([]);
    expect(wellFormed.filter((value) => !pattern.test(value))).toEqual([]);
    for (const name of ['IfMatch', 'IfNoneMatch'])
      expect(components!.parameters![name]).toMatchObject({
        schema: { $ref: '#/components/schemas/EntityTagList' },
      });
  });

  it('refuses it in the older API version too, which documented the same rule', async () => {
    const { task } = await newTask();
    const answer = await api.send('DELETE', `/v1/tasks/${task.task_id}`, {
      key,
      headers: { 'If-Match': '2', 'Api-Version': '2026-11-28' },
    });
    expect([answer.status, answer.json.errors]).toEqual([
      400,
      [expect.objectContaining({ in: 'header', name: 'If-Match' })],
    ]);
  });

  it.each([
    ['If-Match', ['PATCH', 'DELETE']],
    ['If-None-Match', ['GET']],
  ])(
    'answers %s that is neither * nor quoted entity tags with 400 naming the header, and changes nothing',
    async (header, methods) => {
      const { task, etag } = await newTask();
      for (const value of malformed) {
        for (const method of methods) {
          const answer = await api.send(method, `/v1/tasks/${task.task_id}`, {
            key,
            headers: { [header]: value, 'Content-Type': 'application/json' },
            body: method === 'PATCH' ? JSON.stringify({ title: 'changed' }) : undefined,
          });
          expect([method, value, answer.status, answer.json.type]).toEqual([
            method,
            value,
            400,
            '/problems/invalid-request',
          ]);
          // Refused by the document's pattern for EntityTagList, whose description says what to send.
          expect(answer.json.errors).toEqual([
            {
              in: 'header',
              name: header,
              message: expect.stringContaining('comma-separated list of quoted entity tags'),
            },
          ]);
        }
      }
      const after = await api.client(key).GET('/v1/tasks/{task_id}', taskPath(task.task_id));
      expect([after.data!.title, after.response.headers.get('etag')]).toEqual(['t', etag]);
    },
  );

  it('takes every well-formed list: spaces, weak tags, empty elements, tags with commas inside', async () => {
    const { task, etag } = await newTask();
    for (const value of [
      ` ${etag} `,
      `"x,y", ${etag}`,
      `W/"1",${etag}`,
      `,${etag},,`,
      `"a"\t,\t${etag}`,
    ]) {
      const { response } = await api.client(key).GET('/v1/tasks/{task_id}', {
        ...taskPath(task.task_id),
        headers: { 'If-None-Match': value },
      });
      expect([value, response.status]).toEqual([value, 304]);
    }
    const { response } = await api.client(key).PATCH('/v1/tasks/{task_id}', {
      ...taskPath(task.task_id),
      headers: { 'If-Match': `W/"9", "x,y" , ${etag}` },
      body: { title: 'changed' },
    });
    expect(response.status).toBe(200);
  });
});
