import { startTestService, type TestService } from '../support/test-service';

let api: TestService;

beforeAll(async () => {
  api = await startTestService({ config: { rateLimitPerMinute: 5 } });
});
afterAll(() => api.stop());

describe('rate limits per API key', () => {
  it('reports the quota on every answer and refuses past it with 429 and Retry-After, for that key only', async () => {
    const key = await api.createKey('busy');
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await api.send('GET', '/v1/projects', { key });
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-policy')).toMatch(/^"5-in-1min"; q=5; w=60\b/);
      remaining.push(Number(/r=(\d+)/.exec(res.headers.get('ratelimit')!)![1]));
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
    const refused = await api.send('POST', '/v1/projects', {
      key,
      headers: { 'Content-Type': 'application/json' },
      body: '{"name":"x"}',
    });
    expect(refused.status).toBe(429);
    expect(refused.json.type).toBe('/problems/rate-limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await api.service.knex('projects').count({ n: '*' })).toEqual([{ n: 0 }]);

    const other = await api.createKey('calm');
    expect((await api.send('GET', '/v1/projects', { key: other })).status).toBe(200);
  });

  it('sends no rate-limit headers when limiting is off', async () => {
    const unlimited = await startTestService({ config: { rateLimitPerMinute: 0 } });
    try {
      const key = await unlimited.createKey('free');
      for (let i = 0; i < 8; i++) {
        const res = await unlimited.send('GET', '/v1/projects', { key });
        expect([res.status, res.headers.get('ratelimit')]).toEqual([200, null]);
      }
    } finally {
      await unlimited.stop();
    }
  });
});
