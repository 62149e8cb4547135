/**
 * verify-pact's message interactions: each event type, produced by the change it names in the
 * interaction's tenant after its states, answered as the feed shows it, as JSON.
 */
import { messageDescriptions } from '../../src/contract-testing/message-producers';
import { startTestService, type TestService } from '../support/test-service';
import { anyValue, removePacts, resultsOf, verify, writePact } from './pacts';

let api: TestService;
beforeAll(async () => {
  api = await startTestService();
});
afterAll(async () => {
  await api.stop();
  removePacts();
});

const uuid = '0193a5b3-1d20-7e55-8c3f-6a7b8c9d0e12';
const timestamp = '2026-11-21T09:31:12.456Z';
/** The Event's own fields, whatever their values. */
const eventRules = Object.fromEntries(
  ['event_id', 'created_at', 'project_id', 'request_id', 'data.object.project_id']
    .concat(['data.object.task_id', 'data.object.created_at', 'data.object.updated_at'])
    .concat(['data.previous.updated_at'])
    .map((field) => [`$.${field}`, anyValue]),
);

function message(
  description: string,
  states: object[],
  sequence: number,
  type: string,
  data: object,
) {
  return {
    description,
    providerStates: states,
    contents: {
      event_id: uuid,
      sequence,
      type,
      created_at: timestamp,
      project_id: uuid,
      request_id: uuid,
      data,
    },
    matchingRules: { body: eventRules },
    metadata: { contentType: 'application/json' },
  };
}

const project = (name: string) => ({
  project_id: uuid,
  name,
  description: '',
  created_at: timestamp,
  updated_at: timestamp,
});
const task = (title: string, status: string) => ({
  task_id: uuid,
  project_id: uuid,
  title,
  description: null,
  status,
  created_at: timestamp,
  updated_at: timestamp,
});

test('a message of every event type verifies, made by its change after the interaction’s states', async () => {
  const file = writePact({
    messages: [
      message('a project.created event', [], 1, 'project.created', {
        object: project('Contract test project'),
      }),
      message(
        'a project.updated event',
        [{ name: 'a project exists', params: { name: 'Alpha' } }],
        2,
        'project.updated',
        { object: project('Alpha (renamed)'), previous: { name: 'Alpha', updated_at: timestamp } },
      ),
      message(
        'a project.deleted event',
        [{ name: 'a project exists', params: { name: 'Gone' } }],
        2,
        'project.deleted',
        { object: project('Gone') },
      ),
      message('a task.created event', [{ name: 'a project exists' }], 2, 'task.created', {
        object: task('Contract test task', 'pending'),
      }),
      message(
        'a task.updated event',
        [{ name: 'a task exists', params: { title: 'Ship', status: 'in_progress' } }],
        4,
        'task.updated',
        {
          object: task('Ship', 'done'),
          previous: { status: 'in_progress', updated_at: timestamp },
        },
      ),
      message('a task.deleted event', [], 3, 'task.deleted', {
        object: task('Contract test task', 'pending'),
      }),
    ],
  });
  const outcome = await verify(api, file);
  expect(resultsOf(outcome)).toEqual(
    Object.fromEntries(messageDescriptions.map((description) => [description, 'OK'])),
  );
});

test('a message that names no event fails, naming the messages there are', async () => {
  const file = writePact({
    messages: [message('a project.archived event', [], 1, 'project.archived', {})],
  });
  const outcome = await verify(api, file);
  expect(outcome.passed).toBe(false);
  expect(outcome.providerFailures).toEqual([
    {
      interaction: 'a project.archived event',
      reason: expect.stringContaining('names no event this service produces'),
    },
  ]);
  for (const description of messageDescriptions)
    expect(outcome.providerFailures[0].reason).toContain(`"${description}"`);
});
