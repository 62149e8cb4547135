import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import {
  compareVersions,
  findBreakingChanges,
  newestReleaseIn,
  versionProblem,
} from '../../src/cli/check-breaking-changes';
import { openapiDocumentPath, projectRoot } from '../../src/paths';
import { newestVersion } from '../../src/versions/versions';

/** A small released document; each test changes a copy of it. */
function released(): Record<string, any> {
  return {
    openapi: '3.0.3',
    info: { title: 't', version: '1.0.0' },
    paths: {
      '/v1/things/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        get: {
          operationId: 'getThing',
          parameters: [
            { $ref: '#/components/parameters/Limit' },
            {
              name: 'state',
              in: 'query',
              schema: { type: 'array', items: { $ref: '#/components/schemas/State' } },
            },
          ],
          responses: { '200': { description: 'ok' } },
        },
        delete: { operationId: 'deleteThing', responses: { '204': { description: 'gone' } } },
      },
    },
    components: {
      parameters: { Limit: { name: 'limit', in: 'query', schema: { type: 'integer' } } },
      schemas: {
        State: { type: 'string', enum: ['open', 'closed'] },
        Thing: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            size: { type: 'integer' },
            state: { $ref: '#/components/schemas/State' },
          },
        },
      },
    },
  };
}

const get = (doc: Record<string, any>) => doc.paths['/v1/things/{id}'].get;

it('finds nothing between a document and itself', () => {
  expect(findBreakingChanges(released(), released())).toEqual([]);
});

it('lets the document grow: a new operation, an optional parameter, a new field, a new enum value', () => {
  const current = released();
  current.paths['/v1/others'] = {
    get: { operationId: 'listOthers', responses: { '200': { description: 'ok' } } },
  };
  get(current).parameters.push({ name: 'sort', in: 'query', schema: { type: 'string' } });
  current.components.schemas.Thing.properties.colour = { type: 'string' };
  current.components.schemas.State.enum.push('archived');
  expect(findBreakingChanges(released(), current)).toEqual([]);
});

it.each([
  [
    'a removed operation',
    (d: any) => delete d.paths['/v1/things/{id}'].delete,
    'DELETE /v1/things/{id}: operation removed',
  ],
  [
    'a removed parameter',
    (d: any) => get(d).parameters.splice(0, 1),
    'GET /v1/things/{id}: query parameter limit removed',
  ],
  [
    'a parameter made required',
    (d: any) => (get(d).parameters[1].required = true),
    'GET /v1/things/{id}: query parameter state became required',
  ],
  [
    'a new required parameter',
    (d: any) =>
      get(d).parameters.push({
        name: 'owner',
        in: 'query',
        required: true,
        schema: { type: 'string' },
      }),
    'GET /v1/things/{id}: new required query parameter owner',
  ],
  [
    'a parameter of another type',
    (d: any) => (d.components.parameters.Limit.schema.type = 'string'),
    'GET /v1/things/{id}: query parameter limit: type integer became string',
  ],
  [
    'an enum value removed from a parameter',
    (d: any) => (d.components.schemas.State.enum = ['open']),
    'GET /v1/things/{id}: query parameter state: enum value(s) closed removed',
  ],
  [
    'a removed field',
    (d: any) => delete d.components.schemas.Thing.properties.size,
    'schema Thing: field size removed',
  ],
  [
    'a field of another type',
    (d: any) => (d.components.schemas.Thing.properties.size.type = 'string'),
    'schema Thing.size: type integer became string',
  ],
  ['a removed schema', (d: any) => delete d.components.schemas.Thing, 'schema Thing removed'],
])('reports %s', (_case, change, expected) => {
  const current = released();
  change(current);
  expect(findBreakingChanges(released(), current)).toContain(expected);
});

const releasedFolder = path.join(projectRoot, 'openapi', 'released');
const readYaml = (file: string) => YAML.parse(fs.readFileSync(file, 'utf8')) as Record<string, any>;
const releases = fs
  .readdirSync(releasedFolder)
  .map((file) => file.replace(/\.yaml$/, ''))
  .sort(compareVersions);

it('passes for the current document against the newest release, openapi-diff included', () => {
  const result = spawnSync(
    process.execPath,
    [path.join(projectRoot, 'dist', 'src', 'cli', 'check-breaking-changes.js')],
    { encoding: 'utf8' },
  );
  expect([result.status, result.stderr]).toEqual([0, '']);
  expect(result.stdout).toContain(
    `No breaking change against openapi/released/${releases[releases.length - 1]}.yaml`,
  );
});

describe('the released documents', () => {
  it('keeps every release, each named by its own info.version, none breaking the one before', () => {
    expect(releases).toEqual(expect.arrayContaining(['1.0.0', '1.1.0', '1.1.1', '1.2.0', '1.3.0']));
    for (const [i, version] of releases.entries()) {
      const document = readYaml(path.join(releasedFolder, `${version}.yaml`));
      expect(document.info.version).toBe(version);
      if (i > 0)
        expect([
          version,
          findBreakingChanges(
            readYaml(path.join(releasedFolder, `${releases[i - 1]}.yaml`)),
            document,
          ),
        ]).toEqual([version, []]);
    }
  });

  it('names the working document by its API version, and asks a release no version owns for a newer version', () => {
    const newest = newestReleaseIn(releasedFolder)!;
    expect(newest.version).toBe(releases[releases.length - 1]);
    expect(readYaml(openapiDocumentPath).info.version).toBe(newestVersion);
    const released = readYaml(newest.file);
    const changed = structuredClone(released);
    changed.paths['/v1/events'].get.summary += ' (reworded)';
    expect(versionProblem(released, changed)).toMatch(
      /differs from release .* give it a newer version/,
    );
    changed.info.version = '1.0.9';
    expect(versionProblem(released, changed)).toMatch(/newer version/);
    const [major, minor] = released.info.version.split('.').map(Number);
    changed.info.version = `${major}.${minor + 1}.0`;
    expect(versionProblem(released, changed)).toBeUndefined();
    changed.info.version = `${major}.${minor}.10`;
    expect(versionProblem(released, changed)).toBeUndefined();
  });
});

describe('breaking changes to the working document', () => {
  const working = () => readYaml(openapiDocumentPath);
  const schemas = (d: any) => d.components.schemas;

  it.each([
    [
      'a project operation',
      (d: any) => delete d.paths['/v1/projects/{project_id}'].delete,
      'DELETE /v1/projects/{project_id}: operation removed',
    ],
    [
      'a task operation',
      (d: any) => delete d.paths['/v1/tasks/{task_id}'].patch,
      'PATCH /v1/tasks/{task_id}: operation removed',
    ],
    [
      'a project task list',
      (d: any) => delete d.paths['/v1/projects/{project_id}/tasks'],
      'GET /v1/projects/{project_id}/tasks: operation removed',
    ],
    [
      'the event feed',
      (d: any) => delete d.paths['/v1/events'],
      'GET /v1/events: operation removed',
    ],
    [
      'a webhook endpoint operation',
      (d: any) => delete d.paths['/v1/webhook-endpoints/{webhook_endpoint_id}/rotate-secret'],
      'POST /v1/webhook-endpoints/{webhook_endpoint_id}/rotate-secret: operation removed',
    ],
    [
      'a delivery operation',
      (d: any) => delete d.paths['/v1/webhook-endpoints/{webhook_endpoint_id}/deliveries'].post,
      'POST /v1/webhook-endpoints/{webhook_endpoint_id}/deliveries: operation removed',
    ],
    [
      'an event type',
      (d: any) =>
        (schemas(d).EventType.enum = schemas(d).EventType.enum.filter(
          (t: string) => t !== 'task.deleted',
        )),
      'schema EventType: enum value(s) task.deleted removed',
    ],
    [
      'a response field',
      (d: any) => delete schemas(d).Task.properties.updated_at,
      'schema Task: field updated_at removed',
    ],
    [
      'a field of a webhook endpoint',
      (d: any) => delete schemas(d).WebhookEndpoint.properties.disabled_reason,
      'schema WebhookEndpoint: field disabled_reason removed',
    ],
    [
      'a task status',
      (d: any) => (schemas(d).TaskStatus.enum = ['pending', 'done', 'cancelled']),
      'schema TaskStatus: enum value(s) in_progress removed',
    ],
    [
      'a query parameter of the feed',
      (d: any) =>
        (d.paths['/v1/events'].get.parameters = d.paths['/v1/events'].get.parameters.filter(
          (p: any) => !/Wait$/.test(p.$ref),
        )),
      'GET /v1/events: query parameter wait removed',
    ],
    [
      'an optional request field made required',
      (d: any) => schemas(d).ProjectCreate.required.push('description'),
      'schema ProjectCreate: field description became required in requests',
    ],
    [
      'an optional field of a nested request schema made required',
      (d: any) => (schemas(d).WebhookEndpointCreate.required = ['url', 'event_types']),
      'schema WebhookEndpointCreate: field event_types became required in requests',
    ],
  ])('reports the removal or narrowing of %s', (_case, change, expected) => {
    const released = working();
    const current = working();
    change(current);
    expect(findBreakingChanges(released, current)).toContain(expected);
  });

  it('lets an answer-only schema make a field required, and a request field lose its schema default', () => {
    const released = working();
    const current = working();
    schemas(current).Problem.required.push('request_id');
    schemas(released).ProjectCreate.properties.description.default = '';
    expect(findBreakingChanges(released, current)).toEqual([]);
  });
});
