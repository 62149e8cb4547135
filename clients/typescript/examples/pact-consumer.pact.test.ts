/**
 * An integration's consumer-driven contract with the Task Tracker, as Pact V3 consumer tests
 * (jest). Copy it, put your own client code in place of `getTask` and `listProjects`, and run:
 *
 *   npx jest clients/typescript/examples --selectProjects pact     # writes the pacts
 *   npm run -s contract -- verify-pact clients/typescript/pacts      # verifies them against a sandbox
 *
 * The provider states (`given`) are the service's catalogue (README, "Contract tests for
 * integrations"); `fromProviderState` takes the ids they return, and any `Authorization` is
 * replaced by a real key of the interaction's tenant when verified.
 */
import path from 'node:path';
import {
  MatchersV3,
  MessageConsumerPact,
  PactV3,
  asynchronousBodyHandler,
} from '@pact-foundation/pact';

const { fromProviderState, like, regex } = MatchersV3;
const pactDir = process.env.PACT_DIR ?? path.join(__dirname, '..', 'pacts');

// The integration's own code: a task's title and status, or undefined when there is none.
async function getTask(baseUrl: string, apiKey: string, taskId: string) {
  const response = await fetch(`${baseUrl}/v1/tasks/${taskId}`, {
    headers: { Authorization: `Bearer ${apiKey}` },
  });
  if (response.status === 404) return undefined;
  if (!response.ok) throw new Error(`GET /v1/tasks/${taskId} answered ${response.status}`);
  const task = (await response.json()) as { title: string; status: string };
  return { title: task.title, status: task.status };
}

async function listProjects(baseUrl: string, apiKey: string) {
  const response = await fetch(`${baseUrl}/v1/projects`, {
    headers: { Authorization: `Bearer ${apiKey}` },
  });
  return response.status;
}

const pact = new PactV3({ consumer: 'my-integration', provider: 'task-tracker', dir: pactDir });
const taskId = '0193a5b3-1d20-7e55-8c3f-6a7b8c9d0e12';
const json = { 'Content-Type': regex('^application/json(;.*)?$', 'application/json') };

describe('my integration and the Task Tracker API', () => {
  it('reads a task in progress', async () => {
    pact
      .given('a task exists', { status: 'in_progress', title: 'Write the announcement' })
      .uponReceiving('a request for a task in progress')
      .withRequest({
        method: 'GET',
        path: fromProviderState('/v1/tasks/${task_id}', `/v1/tasks/${taskId}`),
        headers: { Authorization: 'Bearer my-key' },
      })
      .willRespondWith({
        status: 200,
        headers: json,
        body: { task_id: like(taskId), title: 'Write the announcement', status: 'in_progress' },
      });
    await pact.executeTest(async (mock) => {
      expect(await getTask(mock.url, 'my-key', taskId)).toEqual({
        title: 'Write the announcement',
        status: 'in_progress',
      });
    });
  });

  it('finds no task where there is none', async () => {
    pact
      .given('nothing exists')
      .uponReceiving('a request for a task that does not exist')
      .withRequest({
        method: 'GET',
        path: fromProviderState('/v1/tasks/${task_id}', `/v1/tasks/${taskId}`),
        headers: { Authorization: 'Bearer my-key' },
      })
      .willRespondWith({ status: 404 });
    await pact.executeTest(async (mock) => {
      expect(await getTask(mock.url, 'my-key', taskId)).toBeUndefined();
    });
  });

  it('is refused without a valid key', async () => {
    pact
      .uponReceiving('a request with an invalid key')
      .withRequest({
        method: 'GET',
        path: '/v1/projects',
        headers: { Authorization: 'Bearer invalid' },
      })
      .willRespondWith({ status: 401 });
    await pact.executeTest(async (mock) => {
      expect(await listProjects(mock.url, 'invalid')).toBe(401);
    });
  });
});

describe('my integration and the Task Tracker events (webhook bodies, feed entries)', () => {
  const events = new MessageConsumerPact({
    consumer: 'my-integration-events',
    provider: 'task-tracker',
    dir: pactDir,
  });

  it('handles a task moved on', async () => {
    const seen: string[] = [];
    await events
      .given({ name: 'a task exists', params: { status: 'pending' } })
      .expectsToReceive('a task.updated event')
      .withContent({
        type: 'task.updated',
        event_id: like(taskId),
        sequence: like(3),
        data: {
          object: { task_id: like(taskId), status: 'in_progress' },
          previous: { status: 'pending' },
        },
      })
      .withMetadata({ contentType: 'application/json' })
      .verify(
        asynchronousBodyHandler(
          async (event: { type: string; data: { object: { status: string } } }) => {
            seen.push(`${event.type}: ${event.data.object.status}`);
          },
        ),
      );
    expect(seen).toEqual(['task.updated: in_progress']);
  });
});
