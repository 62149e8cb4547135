import { newestVersion } from '../../src/versions/versions';
import { loadDocument } from '../../src/http/document';
import { capturedLog } from '../support/captured-log';
import { startTestService, type TestService } from '../support/test-service';

const log = capturedLog();
const logLines = log.lines;

let api: TestService;
let key: string;

beforeAll(async () => {
  api = await startTestService({ config: { logLevel: 'info' }, logDestination: log.stream });
  key = await api.createKey('acme');
});
afterAll(() => api.stop());

/** The log line of the request that got this X-Request-Id, once written. */
async function logLineOf(requestId: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 50; i++) {
    const line = logLines.find((l) => l.request_id === requestId);
    if (line) return line;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no log line for ${requestId}`);
}

describe('request ids', () => {
  it('keeps a sane X-Request-Id from the request and makes one otherwise', async () => {
    const kept = await api.send('GET', '/v1/projects', {
      key,
      headers: { 'X-Request-Id': 'client-trace.42:abc_DEF' },
    });
    expect(kept.headers.get('x-request-id')).toBe('client-trace.42:abc_DEF');
    for (const insane of ['has spaces', 'x'.repeat(129), '<script>']) {
      const made = await api.send('GET', '/v1/projects', {
        key,
        headers: { 'X-Request-Id': insane },
      });
      expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
    const a = await fetch(`${api.baseUrl}/healthz`);
    const b = await fetch(`${api.baseUrl}/healthz`);
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });

  it('repeats the request id in every problem document', async () => {
    const notFound = await api.send('GET', '/v1/tasks/0193a5b3-1d20-7e55-8c3f-6a7b8c9d0e12', {
      key,
      headers: { 'X-Request-Id': 'trace-404' },
    });
    expect(notFound.json.request_id).toBe('trace-404');
    const malformed = await api.send('POST', '/v1/projects', {
      key,
      headers: { 'Content-Type': 'application/json' },
      body: '{',
    });
    expect(malformed.json.request_id).toBe(malformed.headers.get('x-request-id'));
  });
});

describe('request logs', () => {
  it('writes one JSON line per request with method, route template, status, duration and id, never the key or the body', async () => {
    const { data: project } = await api
      .client(key)
      .POST('/v1/projects', { body: { name: 'secret-body-content' } });
    const res = await api.send('PATCH', `/v1/projects/${project!.project_id}`, {
      key,
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'log-me' },
      body: JSON.stringify({ description: 'another-secret' }),
    });
    expect(res.status).toBe(200);
    const line = await logLineOf('log-me');
    expect(line).toMatchObject({
      method: 'PATCH',
      route: '/v1/projects/{project_id}',
      operation: 'updateProject',
      api_version: newestVersion,
      status: 200,
      request_id: 'log-me',
    });
    expect(typeof line.duration_ms).toBe('number');
    // The time of the line, in ISO form, not one left from an earlier millisecond.
    expect(line.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Math.abs(Date.now() - Date.parse(String(line.time)))).toBeLessThan(5000);
    expect(logLines.filter((l) => l.request_id === 'log-me')).toHaveLength(1);
    const everything = JSON.stringify(logLines);
    for (const secret of [
      key,
      key.slice(3),
      'secret-body-content',
      'another-secret',
      project!.project_id,
    ])
      expect(everything).not.toContain(secret);
  });
});

describe('metrics', () => {
  it('counts requests and their latency by operation and status, and shows the pool', async () => {
    await api.client(key).GET('/v1/projects');
    await api.send('GET', '/v1/tasks/0193a5b3-1d20-7e55-8c3f-6a7b8c9d0e12', { key });
    const res = await fetch(`${api.baseUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/^http_requests_total\{operation="listProjects",status="200"\} [1-9]/m);
    expect(text).toMatch(/^http_requests_total\{operation="getTask",status="404"\} [1-9]/m);
    expect(text).toMatch(
      /^http_request_duration_seconds_bucket\{le="0.1",operation="listProjects",status="200"\} [1-9]/m,
    );
    // A series counts on: the next request is added to the same one.
    const listed = (metrics: string) =>
      Number(
        /^http_requests_total\{operation="listProjects",status="200"\} (\d+)/m.exec(metrics)![1],
      );
    await api.client(key).GET('/v1/projects');
    expect(listed(await (await fetch(`${api.baseUrl}/metrics`)).text())).toBe(listed(text) + 1);
    expect(text).toMatch(/^db_pool_connections_used \d+/m);
    expect(text).toMatch(/^db_pool_acquires_pending \d+/m);
    expect(text).toMatch(/^db_request_conflicts_total \d+/m);
  });

  it("gives the service's own routes labels of their own, and Node's process metrics", async () => {
    for (const path of ['/', '/docs', '/metrics', '/healthz', '/openapi.json'])
      expect((await fetch(`${api.baseUrl}${path}`)).status).toBe(200);
    await fetch(`${api.baseUrl}/nothing-here`);
    const text = await (await fetch(`${api.baseUrl}/metrics`)).text();
    for (const route of ['/', '/docs', '/metrics', '/healthz', '/openapi.json'])
      expect(text).toMatch(
        new RegExp(
          `^http_requests_total\\{operation="${route.replace(/\./g, '\\.')}",status="200"\\} [1-9]`,
          'm',
        ),
      );
    // Only what nothing serves is left without a name.
    expect(text).toMatch(/^http_requests_total\{operation="none",status="404"\} [1-9]/m);
    expect(text).not.toMatch(/^http_requests_total\{operation="none",status="200"\}/m);
    for (const metric of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_gc_duration_seconds_count',
    ])
      expect(text).toMatch(new RegExp(`^${metric}(\\{[^}]*\\})? [0-9.e+-]+$`, 'm'));
  });
});

/** The name of every header any response of the document has, lower case. */
function documentedResponseHeaders(
  node: unknown = loadDocument().definition,
  found = new Set<string>(),
): string[] {
  if (node !== null && typeof node === 'object') {
    const object = node as Record<string, unknown>;
    // A response object: a description, and maybe headers (components.headers' entries have no `headers`).
    if (typeof object.description === 'string' && object.headers)
      for (const name of Object.keys(object.headers)) found.add(name.toLowerCase());
    for (const value of Object.values(object)) documentedResponseHeaders(value, found);
  }
  return [...found];
}

describe('security headers and CORS', () => {
  it("sends helmet's security headers and, by default, no CORS headers", async () => {
    const res = await api.send('GET', '/v1/projects', {
      key,
      headers: { Origin: 'https://app.example.com' },
    });
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('lets the configured origins in, and only those', async () => {
    const withCors = await startTestService({
      config: { corsOrigins: ['https://app.example.com'] },
    });
    try {
      const preflight = await fetch(`${withCors.baseUrl}/v1/tasks`, {
        method: 'OPTIONS',
        headers: {
          Origin: 'https://app.example.com',
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'authorization,content-type',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      const other = await fetch(`${withCors.baseUrl}/v1/tasks`, {
        method: 'OPTIONS',
        headers: { Origin: 'https://evil.example.com', 'Access-Control-Request-Method': 'POST' },
      });
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
      const key2 = await withCors.createKey('acme');
      const read = await fetch(`${withCors.baseUrl}/v1/projects`, {
        headers: { Origin: 'https://app.example.com', Authorization: `Bearer ${key2}` },
      });
      expect(read.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      // A browser client may read every header the document gives a response.
      const exposed = read.headers
        .get('access-control-expose-headers')!
        .split(',')
        .map((name) => name.trim().toLowerCase());
      expect(exposed).toEqual(expect.arrayContaining(documentedResponseHeaders()));
      // Caches keep both apart: the origin CORS answered, and the version.
      expect(read.headers.get('vary')!.split(/, */)).toEqual(
        expect.arrayContaining(['Origin', 'Api-Version']),
      );
    } finally {
      await withCors.stop();
    }
  });
});
