/**
 * Versions on every request (issue 45): an answer served in a version says which, with
 * `Vary: Api-Version`, whatever its status; a request names its version with `Api-Version` or
 * gets its key's; anything but exactly one supported version is a 400 that lists them, checked
 * after the key and before the body, and changes nothing.
 */
import YAML from 'yaml';
import { loadConfig } from '../../src/config';
import { loadDocument } from '../../src/http/document';
import { newestVersion, supportedVersions, versions } from '../../src/versions/versions';
import { rawRequest } from '../support/raw-http';
import { startTestService, type TestService } from '../support/test-service';

let api: TestService;
let key: string;
let projectId: string;

beforeAll(async () => {
  api = await startTestService();
  key = await api.createKey('versions');
  const created = await api.send('POST', '/v1/projects', {
    key,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'versions' }),
  });
  projectId = created.json.project_id;
});
afterAll(() => api.stop());

const versionOf = (headers: Headers) => [headers.get('api-version'), headers.get('vary')];

it("answers in the key's version when the request names none, and says so on every status", async () => {
  const task = await api.send('POST', '/v1/tasks', {
    key,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ project_id: projectId, title: 'v' }),
  });
  const read = await api.send('GET', `/v1/tasks/${task.json.task_id}`, { key });
  const notModified = await api.send('GET', `/v1/tasks/${task.json.task_id}`, {
    key,
    headers: { 'If-None-Match': read.headers.get('etag')! },
  });
  const notFound = await api.send(
    'GET',
    `/v1/tasks/${'0'.repeat(8)}-0000-7000-8000-${'0'.repeat(12)}`,
    {
      key,
    },
  );
  const invalid = await api.send('POST', '/v1/tasks', {
    key,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ project_id: projectId }),
  });
  const deleted = await api.send('DELETE', `/v1/tasks/${task.json.task_id}`, { key });
  const answers = { task, read, notModified, notFound, invalid, deleted };
  expect(Object.values(answers).map((answer) => answer.status)).toEqual([
    201, 200, 304, 404, 400, 204,
  ]);
  for (const answer of Object.values(answers))
    expect(versionOf(answer.headers)).toEqual([newestVersion, 'Api-Version']);
});

it('answers in the version the request names', async () => {
  for (const version of supportedVersions) {
    const res = await api.send('GET', '/v1/projects', { key, headers: { 'Api-Version': version } });
    expect([res.status, ...versionOf(res.headers)]).toEqual([200, version, 'Api-Version']);
  }
});

it.each([
  ['an unknown date', '2025-01-01', /"2025-01-01" is not a version of this API/],
  ['a value that is not a date', 'latest', /"latest" is not a date, YYYY-MM-DD/],
  ['an empty value', '', /Api-Version is empty/],
  ['several versions', `${newestVersion}, ${newestVersion}`, /names several versions/],
])(
  'refuses %s with 400 unsupported-api-version listing the versions, before the body, changing nothing',
  async (_case, value, detail) => {
    const res = await api.send('POST', '/v1/projects', {
      key,
      headers: { 'Content-Type': 'application/json', 'Api-Version': value },
      // Not JSON: had the body been read, this would be a malformed-json 400.
      body: '{"name": "not created"',
    });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ type: '/problems/unsupported-api-version', status: 400 });
    expect(res.json.detail).toMatch(detail);
    expect(res.json.detail).toContain(`the supported versions are ${supportedVersions.join(', ')}`);
    // Given before a version was known: it says none.
    expect(res.headers.get('api-version')).toBeNull();
    const listed = await api.send('GET', '/v1/projects?limit=100', { key });
    expect(listed.json.data.map((p: { name: string }) => p.name)).not.toContain('not created');
  },
);

it('refuses an Api-Version header sent twice, each a supported version', async () => {
  const response = await rawRequest(
    api.baseUrl,
    `GET /v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nApi-Version: ${newestVersion}\r\nApi-Version: ${newestVersion}\r\nConnection: close\r\n\r\n`,
  );
  expect(response.status).toBe(400);
  expect(JSON.parse(response.text)).toMatchObject({
    type: '/problems/unsupported-api-version',
  });
});

it('says no version on a 401: the key, and so its version, is not known', async () => {
  const res = await api.send('GET', '/v1/projects', {
    key: 'tt_not-a-key',
    headers: { 'Api-Version': 'nonsense' },
  });
  expect(res.status).toBe(401);
  expect(res.headers.get('api-version')).toBeNull();
});

it("pins a new tenant to the newest version, and its keys follow the tenant's", async () => {
  const tenant = await api.repositories.tenants.findOrCreate('versions');
  expect(tenant.api_version).toBe(newestVersion);
  const [row] = await api.service.knex('api_keys').where('tenant_id', tenant.tenant_id);
  expect([row.api_version, Boolean(row.api_version_pinned)]).toEqual([newestVersion, false]);
});

it('lists the versions without a key, newest first, each with what it changed', async () => {
  const res = await fetch(`${api.baseUrl}/versions`);
  expect([res.status, res.headers.get('content-type')]).toEqual([
    200,
    'application/json; charset=utf-8',
  ]);
  const body = (await res.json()) as { data: Array<Record<string, unknown>> };
  expect(body.data.map((entry) => entry.version)).toEqual([...supportedVersions]);
  expect(body.data).toEqual(
    versions.map((entry) => ({
      version: entry.version,
      released_on: entry.releasedOn,
      status: entry.status,
      changes: entry.changes.map((change) => change.sentence),
    })),
  );
});

it("publishes each version's document as JSON and YAML, and answers 404 for any other", async () => {
  const newest = loadDocument();
  const json = await fetch(`${api.baseUrl}/openapi/${newestVersion}.json`);
  expect([json.status, json.headers.get('content-type')]).toEqual([
    200,
    'application/json; charset=utf-8',
  ]);
  expect(await json.json()).toEqual(newest.definition);
  const yaml = await fetch(`${api.baseUrl}/openapi/${newestVersion}.yaml`);
  expect(yaml.headers.get('content-type')).toMatch(/^application\/yaml/);
  expect(YAML.parse(await yaml.text())).toEqual(newest.definition);
  for (const file of ['2025-01-01.json', `${newestVersion}.xml`, 'latest.json']) {
    const res = await fetch(`${api.baseUrl}/openapi/${file}`);
    expect([file, res.status, ((await res.json()) as { type: string }).type]).toEqual([
      file,
      404,
      '/problems/route-not-found',
    ]);
  }
});

describe('a deprecated version (API_VERSIONS_DEPRECATED)', () => {
  let deprecating: TestService;
  let deprecatingKey: string;
  beforeAll(async () => {
    deprecating = await startTestService({
      config: { apiVersionsDeprecated: new Map([['2026-11-28', '2027-06-30']]) },
    });
    deprecatingKey = await deprecating.createKey('deprecated');
  });
  afterAll(() => deprecating.stop());

  it('answers in it as before, with Deprecation, Sunset and a Link to the versions; the newest with none', async () => {
    const get = (version: string) =>
      deprecating.send('GET', '/v1/projects', {
        key: deprecatingKey,
        headers: { 'Api-Version': version },
      });
    const [old, current] = [await get('2026-11-28'), await get(newestVersion)];
    expect([old.status, current.status]).toEqual([200, 200]);
    // RFC 9745: since the day the next version was released; RFC 8594: an HTTP date.
    expect(old.headers.get('deprecation')).toBe(`@${Date.parse('2026-12-15T00:00:00Z') / 1000}`);
    expect(old.headers.get('sunset')).toBe('Wed, 30 Jun 2027 00:00:00 GMT');
    expect(old.headers.get('link')).toBe('</versions>; rel="deprecation"; type="application/json"');
    for (const name of ['deprecation', 'sunset', 'link'])
      expect([name, current.headers.get(name)]).toEqual([name, null]);
    const listed = (await (await fetch(`${deprecating.baseUrl}/versions`)).json()) as {
      data: { version: string; status: string }[];
    };
    expect(
      listed.data.map((entry: { version: string; status: string }) => [
        entry.version,
        entry.status,
      ]),
    ).toEqual([
      [newestVersion, 'supported'],
      ['2026-11-28', 'deprecated'],
    ]);
  });

  it.each([
    [newestVersion, /older supported versions/],
    ['2020-01-01', /older supported versions/],
    ['2026-11-28:soon', /sunset date as YYYY-MM-DD/],
  ])('refuses API_VERSIONS_DEPRECATED=%s at start', (value, message) => {
    expect(() => loadConfig({ API_VERSIONS_DEPRECATED: value })).toThrow(message);
    expect(() => loadConfig({ API_VERSIONS_DEPRECATED: value })).toThrow(
      /^API_VERSIONS_DEPRECATED /,
    );
  });
});
