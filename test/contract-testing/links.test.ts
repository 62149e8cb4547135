/**
 * The document's `links`: every response that creates or returns a project, task or webhook
 * endpoint links to each operation that takes its id, and following a link from a real answer of
 * the service reaches the thing it came from. A created project links to adding a task to it, the
 * project's id in the body: without it a stateful tester's tasks name no project (422).
 */
import type { OpenAPIV3 } from 'openapi-types';
import YAML from 'yaml';
import fs from 'node:fs';
import { openapiDocumentPath } from '../../src/paths';
import { startTestService, type TestService } from '../support/test-service';

const document = YAML.parse(fs.readFileSync(openapiDocumentPath, 'utf8')) as OpenAPIV3.Document;
const links = document.components!.links as Record<string, OpenAPIV3.LinkObject>;

/** Every operation: its path, method and the path parameters it takes. */
const operations = new Map<string, { path: string; method: string; takes: string[] }>();
for (const [path, item] of Object.entries(document.paths))
  for (const method of ['get', 'post', 'patch', 'delete'] as const) {
    const operation = item![method];
    if (operation?.operationId)
      operations.set(operation.operationId, {
        path,
        method,
        takes: [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]),
      });
  }

/** The links of an operation's success answer, by name, resolved. */
function linksOf(operationId: string): Record<string, OpenAPIV3.LinkObject> {
  const { path, method } = operations.get(operationId)!;
  const operation = (document.paths[path] as Record<string, OpenAPIV3.OperationObject>)[method];
  const success = Object.entries(operation.responses).find(([status]) => /^20[01]$/.test(status));
  const found = (success![1] as OpenAPIV3.ResponseObject).links ?? {};
  return Object.fromEntries(
    Object.entries(found).map(([name, link]) => [
      name,
      '$ref' in link ? links[link.$ref.split('/').pop()!] : link,
    ]),
  );
}

const returning = {
  project: ['createProject', 'getProject', 'updateProject'],
  task: ['createTask', 'getTask', 'updateTask'],
  webhook_endpoint: ['createWebhookEndpoint', 'getWebhookEndpoint', 'updateWebhookEndpoint'],
};

test('every answer that returns a project, task or endpoint links to every operation taking its id', () => {
  for (const [thing, operationIds] of Object.entries(returning)) {
    const taking = [...operations]
      .filter(([, operation]) => operation.takes.includes(`${thing}_id`))
      .map(([operationId]) => operationId)
      .sort();
    for (const operationId of operationIds) {
      const targets = Object.values(linksOf(operationId)).map((link) => link.operationId);
      expect({ operationId, links: targets.filter((id) => taking.includes(id!)).sort() }).toEqual({
        operationId,
        links: taking,
      });
    }
  }
});

test('every link names an operation and exactly the path parameters it takes, from the answer’s body', () => {
  for (const [name, link] of Object.entries(links)) {
    const target = operations.get(link.operationId!);
    expect({ name, exists: Boolean(target) }).toEqual({ name, exists: true });
    expect({ name, parameters: Object.keys(link.parameters ?? {}) }).toEqual({
      name,
      parameters: target!.takes,
    });
    for (const [parameter, expression] of Object.entries(link.parameters ?? {}))
      expect(expression).toBe(`$response.body#/${parameter}`);
  }
});

/** A JSON pointer (RFC 6901) into a value. */
function at(value: unknown, pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((inside, key) => (inside as Record<string, unknown>)?.[key], value);
}

/**
 * A link's `requestBody` made from an answer's body: a string that is a `$response.body#…`
 * expression is that value, and objects and arrays are made member by member (as Schemathesis
 * does); any other value is a literal.
 */
function bodyFrom(template: unknown, answer: unknown): unknown {
  if (typeof template === 'string' && template.startsWith('$response.body#'))
    return at(answer, template.slice('$response.body#'.length));
  if (Array.isArray(template)) return template.map((item) => bodyFrom(item, answer));
  if (template !== null && typeof template === 'object')
    return Object.fromEntries(
      Object.entries(template).map(([name, value]) => [name, bodyFrom(value, answer)]),
    );
  return template;
}

test('a created project links to adding a task to it, with a body naming the project', () => {
  const withBody = Object.entries(linksOf('createProject')).filter(
    ([, link]) => link.requestBody !== undefined,
  );
  expect(withBody.map(([, link]) => link.operationId)).toEqual(['createTask']);
  expect(withBody[0][1].requestBody).toMatchObject({ project_id: '$response.body#/project_id' });
});

describe('following the links from the service’s answers', () => {
  let api: TestService;
  beforeAll(async () => {
    api = await startTestService({ config: { webhookAllowPrivateTargets: true } });
  });
  afterAll(() => api.stop());

  test('each read a link leads to answers 200 for the thing the answer was about', async () => {
    const key = await api.createKey('links');
    const post = (path: string, body: object) =>
      api.send('POST', path, {
        key,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    const project = (await post('/v1/projects', { name: 'Linked' })).json;
    const task = (await post('/v1/tasks', { project_id: project.project_id, title: 'Linked' }))
      .json;
    const endpoint = (await post('/v1/webhook-endpoints', { url: `${api.baseUrl}/hooks` })).json;
    const answers = { createProject: project, createTask: task, createWebhookEndpoint: endpoint };
    const followed: string[] = [];
    for (const [operationId, body] of Object.entries(answers))
      for (const link of Object.values(linksOf(operationId))) {
        const target = operations.get(link.operationId!)!;
        if (target.method !== 'get') continue;
        const path = target.path.replace(/\{(\w+)\}/g, (_, name) => body[name]);
        const answer = await api.send('GET', path, { key });
        followed.push(`${operationId} → ${link.operationId}: ${answer.status}`);
      }
    expect(followed).toEqual([
      'createProject → getProject: 200',
      'createProject → listProjectTasks: 200',
      'createTask → getTask: 200',
      'createTask → getProject: 200',
      'createWebhookEndpoint → getWebhookEndpoint: 200',
      'createWebhookEndpoint → listWebhookDeliveries: 200',
    ]);
  });

  test('the link from a created project adds a task to that project, and the task’s own links lead on', async () => {
    const key = await api.createKey('links-with-bodies');
    const send = (method: string, path: string, body?: unknown) =>
      api.send(method, path, {
        key,
        headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const project = await send('POST', '/v1/projects', { name: 'Linked with a body' });
    const followed: string[] = [];
    for (const link of Object.values(linksOf('createProject'))) {
      if (link.requestBody === undefined) continue;
      const target = operations.get(link.operationId!)!;
      const task = await send(
        target.method.toUpperCase(),
        target.path,
        bodyFrom(link.requestBody, project.json),
      );
      followed.push(`createProject → ${link.operationId}: ${task.status}`);
      expect(task.json.project_id).toBe(project.json.project_id);
      for (const next of Object.values(linksOf(link.operationId!))) {
        const to = operations.get(next.operationId!)!;
        if (to.method !== 'get') continue;
        const path = to.path.replace(/\{(\w+)\}/g, (_, name) => task.json[name]);
        followed.push(`  → ${next.operationId}: ${(await send('GET', path)).status}`);
      }
    }
    expect(followed).toEqual([
      'createProject → createTask: 201',
      '  → getTask: 200',
      '  → getProject: 200',
    ]);
  });
});
