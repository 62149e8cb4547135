import { startTestService, type RawResponse, type TestService } from '../support/test-service';

const timestamp = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const missingId = '0193a5b2-7c3e-7d41-9a6b-2f1e4c8d9a01';
let api: TestService;
let key: string;
let projectId: string;

beforeAll(async () => {
  api = await startTestService();
  key = await api.createKey('acme');
  const { data } = await api.client(key).POST('/v1/projects', { body: { name: 'Launch' } });
  projectId = data!.project_id;
});
afterAll(() => api.stop());

const json = (body: unknown) => ({
  key,
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(body),
});

async function newTask(title = 'Write the announcement') {
  const { data } = await api
    .client(key)
    .POST('/v1/tasks', { body: { project_id: projectId, title } });
  return data!;
}

describe('POST /v1/tasks', () => {
  it('creates a pending task with exactly its twelve fields, updated_at equal to created_at, completed_at null, no planning', async () => {
    const { data, response } = await api.client(key).POST('/v1/tasks', {
      body: {
        project_id: projectId,
        title: 'Write the announcement',
        description: 'Two paragraphs',
      },
    });
    expect(response.status).toBe(201);
    expect(Object.keys(data!).sort()).toEqual(
      [
        'created_at',
        'description',
        'project_id',
        'status',
        'task_id',
        'title',
        'updated_at',
        'completed_at',
        'priority',
        'due_on',
        'labels',
        'assignee',
      ].sort(),
    );
    expect(data).toMatchObject({
      project_id: projectId,
      title: 'Write the announcement',
      description: 'Two paragraphs',
      status: 'pending',
      completed_at: null,
      priority: 'none',
      due_on: null,
      labels: [],
      assignee: null,
    });
    expect(data!.created_at).toMatch(timestamp);
    expect(data!.updated_at).toBe(data!.created_at);
    expect(data!.task_id).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(response.headers.get('location')).toBe(`/v1/tasks/${data!.task_id}`);
    const read = await api
      .client(key)
      .GET('/v1/tasks/{task_id}', { params: { path: { task_id: data!.task_id } } });
    expect(read.data).toEqual(data);
  });

  it('stores a missing description as null', async () => {
    const task = await newTask();
    expect(task.description).toBeNull();
  });

  it('keeps title and description byte for byte, emoji and whitespace included', async () => {
    const title = ' 🧪 Test\tthe 日本語 title ';
    const description = '\n👩🏽‍💻 line one\r\nline two  ';
    const { data } = await api
      .client(key)
      .POST('/v1/tasks', { body: { project_id: projectId, title, description } });
    const read = await api
      .client(key)
      .GET('/v1/tasks/{task_id}', { params: { path: { task_id: data!.task_id } } });
    expect(read.data).toMatchObject({ title, description });
  });

  it('refuses a status on creation, saying to PATCH it afterwards', async () => {
    const res = await api.send(
      'POST',
      '/v1/tasks',
      json({ project_id: projectId, title: 't', status: 'done' }),
    );
    expect(res.status).toBe(400);
    expect(res.json.detail).toMatch(/PATCH/);
    expect(res.json.errors).toEqual([
      expect.objectContaining({
        in: 'body',
        pointer: '/status',
        message: expect.stringMatching(/PATCH/),
      }),
    ]);
  });

  it.each([
    ['no project_id', { title: 't' }, '/project_id'],
    ['no title', { project_id: missingIdOr() }, '/title'],
    ['a project_id that is not a UUID', { project_id: 'abc', title: 't' }, '/project_id'],
    ['a blank title', { project_id: missingIdOr(), title: '\t \n' }, '/title'],
    ['a title of 501 characters', { project_id: missingIdOr(), title: 'x'.repeat(501) }, '/title'],
    [
      'a description of 10,001 characters',
      { project_id: missingIdOr(), title: 't', description: 'x'.repeat(10001) },
      '/description',
    ],
    ['a task_id', { project_id: missingIdOr(), title: 't', task_id: missingId }, '/task_id'],
    [
      'an updated_at',
      { project_id: missingIdOr(), title: 't', updated_at: '2026-11-21T09:30:00.123Z' },
      '/updated_at',
    ],
  ])('refuses %s with a 400 naming the field', async (_case, body, pointer) => {
    const res = await api.send('POST', '/v1/tasks', json(body));
    expect(res.status).toBe(400);
    expect(res.json.errors).toContainEqual(expect.objectContaining({ in: 'body', pointer }));
  });

  it('accepts a title of 500 characters and a null description', async () => {
    const { data, response } = await api.client(key).POST('/v1/tasks', {
      body: { project_id: projectId, title: 'x'.repeat(500), description: null },
    });
    expect(response.status).toBe(201);
    expect(data!.description).toBeNull();
  });

  it('answers 422 for a project that does not exist, and creates nothing', async () => {
    const res = await api.send('POST', '/v1/tasks', json({ project_id: missingId, title: 't' }));
    expect(res.status).toBe(422);
    expect(res.json.type).toBe('/problems/unknown-project');
    expect(
      await api.service.knex('tasks').where('project_id', missingId).count({ n: '*' }),
    ).toEqual([{ n: 0 }]);
  });

  it("answers every create racing its project's delete with 201 and its event, or 422 and nothing", async () => {
    const { data: project } = await api
      .client(key)
      .POST('/v1/projects', { body: { name: 'Deleted under load' } });
    const answers: RawResponse[] = [];
    // Four writers create until their project is gone; the delete comes once some have gone in.
    const writer = async () => {
      for (let i = 0; ; i++) {
        const answer = await api.send(
          'POST',
          '/v1/tasks',
          json({ project_id: project!.project_id, title: `race ${i}` }),
        );
        answers.push(answer);
        if (answer.status !== 201) return;
      }
    };
    const writers = Promise.all(Array.from({ length: 4 }, writer));
    while (answers.length < 20) await new Promise((resolve) => setTimeout(resolve, 1));
    const deleted = await api.send('DELETE', `/v1/projects/${project!.project_id}`, { key });
    await writers;

    expect(deleted.status).toBe(204);
    expect(answers.map((answer) => answer.status).filter((status) => status !== 201)).toEqual([
      422, 422, 422, 422,
    ]);
    expect(
      answers
        .filter((answer) => answer.status === 422)
        .every((answer) => answer.json.type === '/problems/unknown-project'),
    ).toBe(true);
    const created = answers
      .filter((answer) => answer.status === 201)
      .map((answer) => answer.json.task_id as string);
    // Numbered a moment after they commit: read until every acknowledged create's event is there.
    const recorded = async () => {
      const events = await api.send(
        'GET',
        `/v1/events?project_id=${project!.project_id}&type=task.created&limit=200`,
        { key },
      );
      return events.json.data.map(
        (event: { data: { object: { task_id: string } } }) => event.data.object.task_id as string,
      );
    };
    const deadline = Date.now() + 5000;
    while ((await recorded()).length < created.length && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await recorded()).sort()).toEqual(created.sort());
  });
});

describe('PATCH /v1/tasks/{task_id}', () => {
  const transitions = [
    ['pending', 'in_progress'],
    ['in_progress', 'done'],
    ['done', 'pending'],
    ['pending', 'done'],
    ['done', 'in_progress'],
    ['in_progress', 'pending'],
    ['pending', 'pending'],
    ['in_progress', 'cancelled'],
    ['done', 'cancelled'],
    ['cancelled', 'done'],
    ['cancelled', 'in_progress'],
  ] as const;
  const closed = (status: string) => status === 'done' || status === 'cancelled';

  it.each(transitions)(
    'moves a task from %s to %s, answering the whole task with a new updated_at, and completed_at set on closing, kept while closed, cleared on opening',
    async (from, to) => {
      const task = await newTask();
      const client = api.client(key);
      let before = task;
      if (from !== 'pending')
        before = (
          await client.PATCH('/v1/tasks/{task_id}', {
            params: { path: { task_id: task.task_id } },
            body: { status: from },
          })
        ).data!;
      await new Promise((resolve) => setTimeout(resolve, 3));
      const { data, response } = await client.PATCH('/v1/tasks/{task_id}', {
        params: { path: { task_id: task.task_id } },
        body: { status: to },
      });
      expect(response.status).toBe(200);
      expect(data).toMatchObject({
        ...task,
        status: to,
        updated_at: expect.stringMatching(timestamp),
        completed_at: closed(to) ? (closed(from) ? before.completed_at : data!.updated_at) : null,
      });
      expect(before.completed_at).toBe(closed(from) ? before.updated_at : null);
      expect(data!.updated_at > task.updated_at).toBe(true);
      const read = await client.GET('/v1/tasks/{task_id}', {
        params: { path: { task_id: task.task_id } },
      });
      expect(read.data).toEqual(data);
    },
  );

  it('changes title and description, and null clears the description', async () => {
    const { data: task } = await api
      .client(key)
      .POST('/v1/tasks', { body: { project_id: projectId, title: 'a', description: 'b' } });
    const { data } = await api.client(key).PATCH('/v1/tasks/{task_id}', {
      params: { path: { task_id: task!.task_id } },
      body: { title: 'c', description: null },
    });
    expect(data).toMatchObject({
      title: 'c',
      description: null,
      status: 'pending',
      created_at: task!.created_at,
    });
  });

  it('takes application/merge-patch+json, validated like JSON', async () => {
    const task = await newTask();
    const mergePatch = (body: unknown) =>
      api.send('PATCH', `/v1/tasks/${task.task_id}`, {
        key,
        headers: { 'Content-Type': 'application/merge-patch+json' },
        body: JSON.stringify(body),
      });
    const ok = await mergePatch({ status: 'done' });
    expect(ok.status).toBe(200);
    expect(ok.json.status).toBe('done');
    const bad = await mergePatch({ status: 'finished' });
    expect(bad.status).toBe(400);
    expect(bad.json.errors).toEqual([
      expect.objectContaining({
        pointer: '/status',
        message: 'must be one of: pending, in_progress, done, cancelled',
      }),
    ]);
  });

  it.each([
    ['an empty body', {}],
    ['an unknown status', { status: 'blocked' }],
    ['a new project_id', { project_id: missingId }],
    ['a created_at', { created_at: '2026-11-21T09:30:00.123Z' }],
    ['an updated_at', { updated_at: '2026-11-21T09:30:00.123Z' }],
    ['a task_id', { task_id: missingId }],
    ['an empty title', { title: '' }],
    ['an unknown field', { priority: 1 }],
    ['a body that is an array', [{ status: 'done' }]],
  ])('refuses %s with a 400 and changes nothing', async (_case, body) => {
    const task = await newTask();
    const res = await api.send('PATCH', `/v1/tasks/${task.task_id}`, json(body));
    expect(res.status).toBe(400);
    expect(res.json.type).toBe('/problems/invalid-request');
    const read = await api
      .client(key)
      .GET('/v1/tasks/{task_id}', { params: { path: { task_id: task.task_id } } });
    expect(read.data).toEqual(task);
  });

  it.each([
    ['an empty body with a JSON content type', undefined],
    ['an empty object', '{}'],
  ])(
    'says in plain words that %s changes nothing, and which fields it may send',
    async (_case, body) => {
      const task = await newTask();
      const res = await api.send('PATCH', `/v1/tasks/${task.task_id}`, {
        key,
        headers: { 'Content-Type': 'application/json' },
        body,
      });
      expect(res.status).toBe(400);
      const message =
        'names no field to change (send one or more of status, title, description, priority, due_on, labels, assignee)';
      expect(res.json.detail).toBe(
        `The request does not match the contract: body (whole) ${message}.`,
      );
      expect(res.json.errors).toEqual([{ in: 'body', pointer: '', message }]);
    },
  );

  it('answers 404 for a task that does not exist', async () => {
    const res = await api.send('PATCH', `/v1/tasks/${missingId}`, json({ status: 'done' }));
    expect(res.status).toBe(404);
    expect(res.json.type).toBe('/problems/not-found');
  });
});

describe('DELETE /v1/tasks/{task_id}', () => {
  it('deletes the task: 204 with no body, then 404 for the task and for a second delete', async () => {
    const task = await newTask();
    const first = await api.send('DELETE', `/v1/tasks/${task.task_id}`, { key });
    expect(first.status).toBe(204);
    expect(first.text).toBe('');
    expect((await api.send('GET', `/v1/tasks/${task.task_id}`, { key })).status).toBe(404);
    const second = await api.send('DELETE', `/v1/tasks/${task.task_id}`, { key });
    expect(second.status).toBe(404);
  });

  it('leaves the other tasks of the project alone', async () => {
    const keep = await newTask('keep');
    const drop = await newTask('drop');
    await api.send('DELETE', `/v1/tasks/${drop.task_id}`, { key });
    const read = await api
      .client(key)
      .GET('/v1/tasks/{task_id}', { params: { path: { task_id: keep.task_id } } });
    expect(read.data).toEqual(keep);
  });
});

describe('GET /v1/tasks/{task_id}', () => {
  it('answers 404 for a task that does not exist and 400 for an id that is not a UUID', async () => {
    expect((await api.send('GET', `/v1/tasks/${missingId}`, { key })).status).toBe(404);
    const bad = await api.send('GET', '/v1/tasks/not-a-uuid', { key });
    expect(bad.status).toBe(400);
    expect(bad.json.errors).toEqual([expect.objectContaining({ in: 'path', name: 'task_id' })]);
  });
});

/** A project id for bodies refused before the project matters. */
function missingIdOr(): string {
  return missingId;
}
