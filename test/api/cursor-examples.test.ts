/**
 * Every `cursor` parameter's example is a cursor its own list gives: sent with the example of
 * what a cursor is made for (a task list's `sort`), it reads a page, not a `400`. A client copying
 * the example, or a tester sending the document's examples (Schemathesis, the mock), reaches the
 * list instead of the invalid-cursor problem.
 */
import type { OpenAPIV3 } from 'openapi-types';
import { loadDocument } from '../../src/http/document';
import { startTestService, type TestService } from '../support/test-service';

const document = loadDocument().definition as OpenAPIV3.Document;

/** A parameter as written or by its `$ref` into components. */
function resolved(parameter: OpenAPIV3.ParameterObject | OpenAPIV3.ReferenceObject) {
  if (!('$ref' in parameter)) return parameter;
  const name = parameter.$ref.split('/').pop()!;
  return document.components!.parameters![name] as OpenAPIV3.ParameterObject;
}

/** Each list that takes a cursor: its path and the query its examples make. */
const lists = Object.entries(document.paths).flatMap(([path, item]) => {
  const operation = item!.get;
  const parameters = (operation?.parameters ?? []).map(resolved);
  const cursor = parameters.find((p) => p.in === 'query' && p.name === 'cursor');
  if (!operation || !cursor) return [];
  const query = new URLSearchParams({ cursor: String(cursor.example) });
  const sort = parameters.find((p) => p.in === 'query' && p.name === 'sort');
  if (sort) query.set('sort', String(sort.example));
  return [{ operationId: operation.operationId!, path, query }];
});

let api: TestService;
beforeAll(async () => {
  api = await startTestService({ config: { webhookAllowPrivateTargets: true } });
});
afterAll(() => api.stop());

test('each list’s cursor example reads a page of that list', async () => {
  const key = await api.createKey('cursor-examples');
  const post = async (path: string, body: object) =>
    (
      await api.send('POST', path, {
        key,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json;
  // Two events (the feed's example is the position after its second), a task, an endpoint.
  const ids: Record<string, string> = {
    project_id: (await post('/v1/projects', { name: 'Cursors' })).project_id,
    webhook_endpoint_id: (await post('/v1/webhook-endpoints', { url: `${api.baseUrl}/hooks` }))
      .webhook_endpoint_id,
  };
  await post('/v1/tasks', { project_id: ids.project_id, title: 'Cursors' });

  const read = async ({ path, query }: (typeof lists)[number]) => {
    const url = `${path.replace(/\{(\w+)\}/g, (_, name) => ids[name])}?${query}`;
    // The feed numbers events after their commits: until it has two, the example is ahead (410).
    const deadline = Date.now() + 5000;
    for (;;) {
      const answer = await api.send('GET', url, { key });
      if (answer.status !== 410 || Date.now() > deadline) return answer;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const answers: string[] = [];
  for (const list of lists) {
    const answer = await read(list);
    answers.push(`${list.operationId} ${answer.status} ${answer.json.detail ?? ''}`.trim());
  }
  expect(answers).toEqual([
    'listProjects 200',
    'listProjectTasks 200',
    'listEvents 200',
    'listWebhookEndpoints 200',
    'listWebhookDeliveries 200',
  ]);
});
