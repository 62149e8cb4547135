import { toDbTimestamp } from '../../src/db/timestamps';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let key: string;
let projectId: string;

beforeAll(async () => {
  api = await startTestService();
  key = await api.createKey('acme');
  const { data } = await api.client(key).POST('/v1/projects', { body: { name: 'retries' } });
  projectId = data!.project_id;
});
afterAll(() => api.stop());

const post = (path: string, body: unknown, idempotencyKey: string, apiKey = key) =>
  api.send('POST', path, {
    key: apiKey,
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': idempotencyKey },
    body: JSON.stringify(body),
  });

const countTasks = async (title: string) =>
  Number((await api.service.knex('tasks').where('title', title).count({ n: '*' }))[0].n);

describe('Idempotency-Key', () => {
  it('replays the first answer to a retry, with Idempotent-Replayed, and creates nothing more', async () => {
    const body = { project_id: projectId, title: 'once only' };
    const first = await post('/v1/tasks', body, 'retry-1');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await post('/v1/tasks', { title: 'once only', project_id: projectId }, 'retry-1');
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json).toEqual(first.json);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(await countTasks('once only')).toBe(1);
  });

  it('refuses the same key with another body: 422, nothing created', async () => {
    await post('/v1/projects', { name: 'first' }, 'retry-2');
    const other = await post('/v1/projects', { name: 'second' }, 'retry-2');
    expect(other.status).toBe(422);
    expect(other.json.type).toBe('/problems/idempotency-key-reused');
    expect(await api.service.knex('projects').where('name', 'second').count({ n: '*' })).toEqual([
      { n: 0 },
    ]);
  });

  it('keeps keys per tenant: another tenant may use the same key', async () => {
    const otherKey = await api.createKey('globex');
    const { data } = await api.client(otherKey).POST('/v1/projects', { body: { name: 'theirs' } });
    await post('/v1/tasks', { project_id: projectId, title: 'mine' }, 'shared-key');
    const theirs = await post(
      '/v1/tasks',
      { project_id: data!.project_id, title: 'theirs' },
      'shared-key',
      otherKey,
    );
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
  });

  it('creates exactly one task from 50 concurrent requests with one key; the rest replay or are told to wait', async () => {
    const body = { project_id: projectId, title: 'stampede' };
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => post('/v1/tasks', body, 'stampede-key')),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const created = answers.filter((a) => a.status === 201);
    expect(new Set(created.map((a) => a.json.task_id)).size).toBe(1);
    expect(created.filter((a) => a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    for (const busy of answers.filter((a) => a.status === 409))
      expect(busy.json.type).toBe('/problems/idempotency-in-progress');
    expect(await countTasks('stampede')).toBe(1);
  });

  it('lets a retry run again when the first attempt failed', async () => {
    const missing = await post(
      '/v1/tasks',
      { project_id: '0193a5b2-7c3e-7d41-9a6b-2f1e4c8d9a01', title: 'late project' },
      'after-failure',
    );
    expect(missing.status).toBe(422);
    expect(missing.json.type).toBe('/problems/unknown-project');
    const retried = await post(
      '/v1/tasks',
      { project_id: '0193a5b2-7c3e-7d41-9a6b-2f1e4c8d9a01', title: 'late project' },
      'after-failure',
    );
    expect(retried.json.type).toBe('/problems/unknown-project');
  });

  it('refuses a key over 255 characters with 400, and takes one of 255', async () => {
    const long = await post('/v1/projects', { name: 'x' }, 'k'.repeat(256));
    expect(long.status).toBe(400);
    expect(long.json.errors).toEqual([
      expect.objectContaining({ in: 'header', name: 'Idempotency-Key' }),
    ]);
    expect((await post('/v1/projects', { name: 'x' }, 'k'.repeat(255))).status).toBe(201);
  });

  it('forgets a key after 24 hours: the same key then runs a new request', async () => {
    const first = await post('/v1/tasks', { project_id: projectId, title: 'yesterday' }, 'day-old');
    await api.service
      .knex('idempotency_keys')
      .where('idempotency_key', 'day-old')
      .update({ created_at: hoursAgo(24.01) });
    const again = await post('/v1/tasks', { project_id: projectId, title: 'today' }, 'day-old');
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.json.task_id).not.toBe(first.json.task_id);
    const replay = await post('/v1/tasks', { project_id: projectId, title: 'today' }, 'day-old');
    expect(replay.json.task_id).toBe(again.json.task_id);
  });
});

const hoursAgo = (hours: number) =>
  toDbTimestamp(new Date(Date.now() - hours * 3_600_000).toISOString());

describe('expired Idempotency-Keys', () => {
  it('are removed in the background, in batches, and fresh ones kept', async () => {
    const cleaned = await startTestService({ config: { cleanupIntervalSeconds: 0.2 } });
    try {
      const apiKey = await cleaned.createKey('acme');
      const fresh = await cleaned.send('POST', '/v1/projects', {
        key: apiKey,
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'fresh' },
        body: '{"name": "kept"}',
      });
      expect(fresh.status).toBe(201);
      const { tenant_id } = await cleaned.service.knex('idempotency_keys').first('tenant_id');
      const stale = Array.from({ length: 1200 }, (_, i) => ({
        tenant_id,
        idempotency_key: `stale-${i}`,
        fingerprint: '0'.repeat(64),
        created_at: hoursAgo(25 + i / 100),
        response_status: 201,
        response_headers: '{}',
        response_body: '{}',
      }));
      for (let i = 0; i < stale.length; i += 200)
        await cleaned.service.knex('idempotency_keys').insert(stale.slice(i, i + 200));
      const deadline = Date.now() + 10_000;
      let left: number;
      do {
        await new Promise((resolve) => setTimeout(resolve, 200));
        left = Number(
          (
            await cleaned.service
              .knex('idempotency_keys')
              .where('idempotency_key', 'like', 'stale-%')
              .count({ n: '*' })
          )[0].n,
        );
      } while (left > 0 && Date.now() < deadline);
      expect(left).toBe(0);
      expect(await cleaned.service.knex('idempotency_keys').pluck('idempotency_key')).toEqual([
        'fresh',
      ]);
    } finally {
      await cleaned.stop();
    }
  });
});
