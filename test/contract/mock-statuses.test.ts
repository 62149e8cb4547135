/**
 * Prism's mock answers every (operation, documented status) with that response's own example:
 * `Prefer: code=404` gets a 404 whose body validates against the operation's 404 and whose
 * problem `type` and `status` are the ones its examples show, not another response's.
 */
import type { OpenAPIV3 } from 'openapi-types';
import addFormats from 'ajv-formats';
import { OpenAPIBackend } from 'openapi-backend';
import { loadDocument } from '../../src/http/document';
import { assertConformsToContract } from '../support/contract';
import { startPrism, type RunningPrism } from '../support/prism';

const methods = ['get', 'post', 'patch', 'delete'] as const;
let mock: RunningPrism;
let document: OpenAPIV3.Document;

beforeAll(async () => {
  const api = new OpenAPIBackend({
    definition: loadDocument().definition,
    // quick: see document.test.ts (a link's requestBody).
    quick: true,
    customizeAjv: (ajv) => addFormats(ajv),
  });
  [mock] = await Promise.all([startPrism({ mock: 'static' }), api.init()]);
  // Dereferenced: responses, examples and parameters as they are, not as $refs.
  document = api.definition as OpenAPIV3.Document;
});
afterAll(() => mock.stop());

interface Pair {
  method: string;
  route: string;
  operationId: string;
  status: number;
  response: OpenAPIV3.ResponseObject;
  requestBody?: unknown;
}

/** Every (operation, documented status) of the document, each with a path and body its examples give. */
function pairs(): Pair[] {
  const found: Pair[] = [];
  for (const [route, item] of Object.entries(document.paths) as Array<
    [string, OpenAPIV3.PathItemObject]
  >) {
    for (const method of methods.filter((m) => item[m])) {
      const operation = item[method]!;
      const parameters = [
        ...(item.parameters ?? []),
        ...(operation.parameters ?? []),
      ] as OpenAPIV3.ParameterObject[];
      const path = route.replace(/\{([^}]+)\}/g, (_, name) =>
        String(parameters.find((p) => p.name === name)!.example),
      );
      const media = (operation.requestBody as OpenAPIV3.RequestBodyObject | undefined)?.content[
        'application/json'
      ];
      const requestBody =
        media &&
        (media.example ??
          Object.values(media.examples ?? {})[0]?.['value' as never] ??
          (media.schema as OpenAPIV3.SchemaObject).example);
      for (const [status, response] of Object.entries(operation.responses) as Array<
        [string, OpenAPIV3.ResponseObject]
      >) {
        found.push({
          method,
          route: path,
          operationId: operation.operationId!,
          status: Number(status),
          response,
          requestBody,
        });
      }
    }
  }
  return found;
}

/** The problem types a response's examples show: what the mock may answer for that status. */
function ownTypes(response: OpenAPIV3.ResponseObject): string[] {
  const media = response.content?.['application/problem+json'];
  if (!media) return [];
  const examples = [
    media.example,
    ...Object.values(media.examples ?? {}).map((e) => (e as OpenAPIV3.ExampleObject).value),
  ];
  return examples.filter((e) => e !== undefined).map((e) => (e as { type: string }).type);
}

it('answers every documented status of every operation with that response, its problem type its own', async () => {
  const all = pairs();
  const failures: string[] = [];
  for (const pair of all) {
    const where = `${pair.operationId} ${pair.status}`;
    const response = await fetch(`${mock.url}${pair.route}`, {
      method: pair.method.toUpperCase(),
      headers: {
        Authorization: 'Bearer mock',
        Prefer: `code=${pair.status}`,
        ...(pair.requestBody === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: pair.requestBody === undefined ? undefined : JSON.stringify(pair.requestBody),
    });
    const text = await response.text();
    if (response.status !== pair.status) {
      failures.push(`${where}: answered ${response.status} ${text.slice(0, 200)}`);
      continue;
    }
    const headers = new Headers(response.headers);
    const type = headers.get('content-type');
    // Prism's mock leaves the charset off its Content-Type; the service's own tests check it.
    if (type && !/charset/i.test(type)) headers.set('content-type', `${type}; charset=utf-8`);
    try {
      await assertConformsToContract(pair.method, pair.route, {
        status: response.status,
        headers,
        text,
      });
    } catch (error) {
      failures.push(`${where}: ${(error as Error).message}`);
      continue;
    }
    if (pair.status >= 400) {
      const own = ownTypes(pair.response);
      const body = JSON.parse(text) as { type: string; status: number };
      if (own.length === 0) failures.push(`${where}: the response has no example of its own`);
      else if (!own.includes(body.type) || body.status !== pair.status)
        failures.push(
          `${where}: answered type ${body.type} status ${body.status}, not one of its own (${own.join(', ')})`,
        );
    }
  }
  console.log(
    `The mock answered ${all.length - failures.length} of ${all.length} (operation, documented status) pairs with that response.`,
  );
  expect(failures).toEqual([]);
  expect(all.length).toBeGreaterThan(100);
});
