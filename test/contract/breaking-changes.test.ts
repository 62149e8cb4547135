import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { findBreakingChanges } from '../../src/cli/check-breaking-changes';
import { projectRoot } from '../../src/paths';

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
            { name: 'state', in: 'query', schema: { type: 'array', items: { $ref: '#/components/schemas/State' } } },
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
        Thing: { type: 'object', properties: { id: { type: 'string' }, size: { type: 'integer' }, state: { $ref: '#/components/schemas/State' } } },
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
  current.paths['/v1/others'] = { get: { operationId: 'listOthers', responses: { '200': { description: 'ok' } } } };
  get(current).parameters.push({ name: 'sort', in: 'query', schema: { type: 'string' } });
  current.components.schemas.Thing.properties.colour = { type: 'string' };
  current.components.schemas.State.enum.push('archived');
  expect(findBreakingChanges(released(), current)).toEqual([]);
});

it.each([
  ['a removed operation', (d: any) => delete d.paths['/v1/things/{id}'].delete, 'DELETE /v1/things/{id}: operation removed'],
  ['a removed parameter', (d: any) => get(d).parameters.splice(0, 1), 'GET /v1/things/{id}: query parameter limit removed'],
  ['a parameter made required', (d: any) => (get(d).parameters[1].required = true), 'GET /v1/things/{id}: query parameter state became required'],
  [
    'a new required parameter',
    (d: any) => get(d).parameters.push({ name: 'owner', in: 'query', required: true, schema: { type: 'string' } }),
    'GET /v1/things/{id}: new required query parameter owner',
  ],
  ['a parameter of another type', (d: any) => (d.components.parameters.Limit.schema.type = 'string'), 'GET /v1/things/{id}: query parameter limit: type integer became string'],
  ['an enum value removed from a parameter', (d: any) => (d.components.schemas.State.enum = ['open']), 'GET /v1/things/{id}: query parameter state: enum value(s) closed removed'],
  ['a removed field', (d: any) => delete d.components.schemas.Thing.properties.size, 'schema Thing: field size removed'],
  ['a field of another type', (d: any) => (d.components.schemas.Thing.properties.size.type = 'string'), 'schema Thing.size: type integer became string'],
  ['a removed schema', (d: any) => delete d.components.schemas.Thing, 'schema Thing removed'],
])('reports %s', (_case, change, expected) => {
  const current = released();
  change(current);
  expect(findBreakingChanges(released(), current)).toContain(expected);
});

it('passes for the current document against the newest release, openapi-diff included', () => {
  const result = spawnSync(process.execPath, [path.join(projectRoot, 'dist', 'src', 'cli', 'check-breaking-changes.js')], { encoding: 'utf8' });
  expect([result.status, result.stderr]).toEqual([0, '']);
  expect(result.stdout).toMatch(/No breaking change against openapi\/released\/1\.0\.0\.yaml/);
});
