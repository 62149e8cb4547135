/**
 * verify-pact's provider states against the real service: every state of the catalogue with its
 * parameters, its values injected into requests and expected answers; the key rules; an unknown
 * state; and interactions that never see each other's data.
 */
import { stateNames } from '../../src/contract-testing/provider-states';
import { startTestService, type TestService } from '../support/test-service';
import {
  anyValue,
  fromState,
  jsonContent,
  readOf,
  removePacts,
  resultsOf,
  verify,
  writePact,
} from './pacts';

let api: TestService;
beforeAll(async () => {
  // As in the sandbox verify-pact starts: webhook endpoints may point at this machine.
  api = await startTestService({ config: { webhookAllowPrivateTargets: true } });
});
afterAll(async () => {
  await api.stop();
  removePacts();
});

const auth = { Authorization: 'Bearer some-key' };
const somewhere = '0193a5b3-1d20-7e55-8c3f-6a7b8c9d0e12';
const json = { header: { 'Content-Type': jsonContent } };

test('every state of the catalogue sets up what it says, with its parameters, and returns its values', async () => {
  const file = writePact({
    interactions: [
      {
        description: 'a named project is read',
        providerStates: [
          { name: 'a project exists', params: { name: 'Alpha', description: 'First' } },
        ],
        request: {
          method: 'GET',
          path: `/v1/projects/${somewhere}`,
          headers: auth,
          generators: { path: fromState('/v1/projects/${project_id}') },
        },
        response: {
          status: 200,
          headers: { 'Content-Type': 'application/json' },
          body: { project_id: somewhere, name: 'Alpha', description: 'First' },
          matchingRules: { ...json, body: { '$.project_id': anyValue } },
        },
      },
      {
        description: 'two done tasks are listed',
        providerStates: [
          { name: 'a project with tasks exists', params: { count: 2, status: 'done' } },
        ],
        request: {
          method: 'GET',
          path: `/v1/projects/${somewhere}/tasks`,
          headers: auth,
          generators: { path: fromState('/v1/projects/${project_id}/tasks') },
        },
        response: {
          status: 200,
          body: { data: [{ status: 'done' }, { status: 'done' }], next_cursor: null },
        },
      },
      {
        description: 'three tasks in turn by default',
        providerStates: [{ name: 'a project with tasks exists' }],
        request: {
          method: 'GET',
          path: `/v1/projects/${somewhere}/tasks`,
          query: { sort: 'created_at' },
          headers: auth,
          generators: { path: fromState('/v1/projects/${project_id}/tasks') },
        },
        response: {
          status: 200,
          body: {
            data: [{ status: 'pending' }, { status: 'in_progress' }, { status: 'done' }],
            next_cursor: null,
          },
        },
      },
      {
        description: 'a task is changed with its ETag',
        providerStates: [
          {
            name: 'a task exists',
            params: { status: 'in_progress', title: 'Write it', description: 'Soon' },
          },
        ],
        request: {
          method: 'PATCH',
          path: `/v1/tasks/${somewhere}`,
          headers: { ...auth, 'Content-Type': 'application/json', 'If-Match': '"x"' },
          body: { status: 'done' },
          generators: {
            path: fromState('/v1/tasks/${task_id}'),
            header: { 'If-Match': fromState('${etag}') },
          },
        },
        response: {
          status: 200,
          body: { title: 'Write it', description: 'Soon', status: 'done' },
        },
      },
      readOf('a task that does not exist', [{ name: 'nothing exists' }], '/v1/tasks/${task_id}', {
        status: 404,
      }),
      readOf(
        'an endpoint that does not exist',
        [{ name: 'nothing exists' }],
        '/v1/webhook-endpoints/${webhook_endpoint_id}',
        { status: 404 },
      ),
      readOf(
        "another tenant's task",
        [{ name: "another tenant's task exists" }],
        '/v1/tasks/${task_id}',
        { status: 404 },
      ),
      {
        description: 'an endpoint is read',
        providerStates: [
          {
            name: 'a webhook endpoint exists',
            params: { url: 'http://127.0.0.1:9999/hooks', event_types: ['task.created'] },
          },
        ],
        request: {
          method: 'GET',
          path: `/v1/webhook-endpoints/${somewhere}`,
          headers: auth,
          generators: { path: fromState('/v1/webhook-endpoints/${webhook_endpoint_id}') },
        },
        response: {
          status: 200,
          body: { url: 'http://127.0.0.1:9999/hooks', event_types: ['task.created'] },
        },
      },
      {
        description: 'the feed from a cursor',
        providerStates: [{ name: 'the feed has events', params: { count: 4 } }],
        request: {
          method: 'GET',
          path: '/v1/events',
          query: { cursor: 'x' },
          headers: auth,
          generators: { query: { cursor: fromState('${cursor}') } },
        },
        response: {
          status: 200,
          body: {
            data: [
              { sequence: 1, type: 'project.created' },
              { sequence: 2, type: 'task.created' },
              { sequence: 3, type: 'task.created' },
              { sequence: 4, type: 'task.created' },
            ],
            next_cursor: 'y',
            has_more: false,
          },
          matchingRules: { body: { '$.data[*].event_id': anyValue, '$.next_cursor': anyValue } },
        },
      },
      {
        description: 'nothing after the latest cursor',
        providerStates: [{ name: 'the feed has events' }],
        request: {
          method: 'GET',
          path: '/v1/events',
          query: { cursor: 'x' },
          headers: auth,
          generators: { query: { cursor: fromState('${latest_cursor}') } },
        },
        response: { status: 200, body: { data: [], has_more: false } },
      },
      {
        description: 'a read-only key cannot create',
        providerStates: [{ name: 'a project exists' }, { name: 'the key can only read' }],
        request: {
          method: 'POST',
          path: '/v1/projects',
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: { name: 'Refused' },
        },
        response: { status: 403 },
      },
      readOf(
        'a read-only key reads',
        [{ name: 'a project exists' }, { name: 'the key can only read' }],
        '/v1/projects/${project_id}',
        { status: 200 },
      ),
    ],
  });
  const outcome = await verify(api, file);
  expect(resultsOf(outcome)).toEqual({
    'a named project is read': 'OK',
    'two done tasks are listed': 'OK',
    'three tasks in turn by default': 'OK',
    'a task is changed with its ETag': 'OK',
    'a task that does not exist': 'OK',
    'an endpoint that does not exist': 'OK',
    "another tenant's task": 'OK',
    'an endpoint is read': 'OK',
    'the feed from a cursor': 'OK',
    'nothing after the latest cursor': 'OK',
    'a read-only key cannot create': 'OK',
    'a read-only key reads': 'OK',
  });
  expect(outcome.passed).toBe(true);
});

test('a missing key stays missing, Bearer invalid is sent as it is, any other key becomes a valid one', async () => {
  const file = writePact({
    interactions: [
      {
        description: 'no key',
        request: { method: 'GET', path: '/v1/projects' },
        response: { status: 401 },
      },
      {
        description: 'an invalid key',
        request: {
          method: 'GET',
          path: '/v1/projects',
          headers: { Authorization: 'Bearer invalid' },
        },
        response: { status: 401 },
      },
      {
        description: 'any key',
        request: {
          method: 'GET',
          path: '/v1/projects',
          headers: { Authorization: 'Bearer made-up' },
        },
        response: { status: 200, body: { data: [], next_cursor: null } },
      },
    ],
  });
  const outcome = await verify(api, file);
  expect(resultsOf(outcome)).toEqual({ 'no key': 'OK', 'an invalid key': 'OK', 'any key': 'OK' });
});

test('interactions never see each other’s data: each runs in a tenant of its own', async () => {
  const list = (name: string, states: object[], data: object[]) => ({
    description: name,
    providerStates: states,
    request: { method: 'GET', path: '/v1/projects', headers: auth },
    response: { status: 200, body: { data, next_cursor: null } },
  });
  const file = writePact({
    interactions: [
      list(
        'Alpha alone',
        [{ name: 'a project exists', params: { name: 'Alpha' } }],
        [{ name: 'Alpha' }],
      ),
      list(
        'Beta alone',
        [{ name: 'a project exists', params: { name: 'Beta' } }],
        [{ name: 'Beta' }],
      ),
      list('nothing at all', [], []),
      list('nothing, as stated', [{ name: 'nothing exists' }], []),
      list("not another tenant's", [{ name: "another tenant's task exists" }], []),
    ],
  });
  const outcome = await verify(api, file);
  expect(Object.values(resultsOf(outcome))).toEqual(['OK', 'OK', 'OK', 'OK', 'OK']);
});

test('a state outside the catalogue, or a parameter the API refuses, fails its interaction only, saying why', async () => {
  const file = writePact({
    interactions: [
      {
        description: 'a unicorn is read',
        providerStates: [{ name: 'a unicorn exists' }],
        request: { method: 'GET', path: '/v1/projects', headers: auth },
        response: { status: 200 },
      },
      {
        description: 'a task in a status that does not exist',
        providerStates: [{ name: 'a task exists', params: { status: 'sleeping' } }],
        request: { method: 'GET', path: '/v1/projects', headers: auth },
        response: { status: 200 },
      },
      {
        description: 'too many tasks',
        providerStates: [{ name: 'a project with tasks exists', params: { count: 1000 } }],
        request: { method: 'GET', path: '/v1/projects', headers: auth },
        response: { status: 200 },
      },
      {
        description: 'still fine',
        request: { method: 'GET', path: '/v1/projects', headers: auth },
        response: { status: 200 },
      },
    ],
  });
  const outcome = await verify(api, file);
  expect(outcome.passed).toBe(false);
  expect(resultsOf(outcome)['still fine']).toBe('OK');
  const reasons = Object.fromEntries(
    outcome.providerFailures.map(({ interaction, reason }) => [interaction, reason]),
  );
  expect(Object.keys(reasons)).toEqual([
    'a unicorn is read',
    'a task in a status that does not exist',
    'too many tasks',
  ]);
  expect(reasons['a unicorn is read']).toContain(
    '"a unicorn exists" is not one this service knows',
  );
  for (const name of stateNames) expect(reasons['a unicorn is read']).toContain(`"${name}"`);
  expect(reasons['a task in a status that does not exist']).toMatch(/400.*status/);
  expect(reasons['too many tasks']).toContain('count must be a whole number from 1 to 100');
});

test('Pact V2 (one providerState) and V4 (HTTP and message interactions in one file) verify too', async () => {
  const v2 = writePact(
    {
      interactions: [
        {
          description: 'projects listed, V2',
          providerState: 'a project exists',
          request: { method: 'GET', path: '/v1/projects', headers: auth },
          response: {
            status: 200,
            body: { data: [{ name: 'Contract test project' }], next_cursor: null },
          },
        },
      ],
    },
    'v2-consumer',
    '2.0.0',
  );
  expect(resultsOf(await verify(api, v2))).toEqual({ 'projects listed, V2': 'OK' });
  const v4 = writePact(
    {
      interactions: [
        {
          type: 'Synchronous/HTTP',
          key: 'http',
          description: 'a task read, V4',
          providerStates: [{ name: 'a task exists', params: { title: 'Four' } }],
          request: {
            method: 'GET',
            path: `/v1/tasks/${somewhere}`,
            headers: { Authorization: ['Bearer some-key'] },
            generators: { path: fromState('/v1/tasks/${task_id}') },
          },
          response: {
            status: 200,
            body: { content: { title: 'Four' }, contentType: 'application/json', encoded: false },
          },
        },
        {
          type: 'Asynchronous/Messages',
          key: 'message',
          description: 'a task.deleted event',
          providerStates: [{ name: 'a task exists', params: { title: 'Gone' } }],
          contents: {
            content: { type: 'task.deleted', data: { object: { title: 'Gone' } } },
            contentType: 'application/json',
            encoded: false,
          },
          metadata: { contentType: 'application/json' },
        },
      ],
    },
    'v4-consumer',
    '4.0',
  );
  expect(resultsOf(await verify(api, v4))).toEqual({
    'a task read, V4': 'OK',
    'a task.deleted event': 'OK',
  });
});
