/**
 * A consumer test of the Task Tracker API with Pact (V4): your code adds a task to a project and
 * reads a task, each against Pact's mock of the service, and `npm test` writes what it relied on
 * to pacts/my-integration-task-tracker.json. The Task Tracker's `verify-pact` then replays that
 * pact against the real service (its README, "Contract tests for integrations").
 *
 * To make it yours, put your client code in place of `addTask` and `readTask` and your name in
 * `consumer`. The provider states (`given`) are the service's catalogue; `fromProviderState`
 * takes the ids they make, and `Authorization` is replaced by a real key when verified.
 */
import path from 'node:path';
import { MatchersV3, PactV4 } from '@pact-foundation/pact';

const { fromProviderState, regex, uuid } = MatchersV3;

/** The API version this code is written for: the service answers in it, and is verified in it. */
const apiVersion = '2026-12-15';

interface Task {
  task_id: string;
  project_id: string;
  title: string;
  status: string;
}

// Your code: it adds a task to a project and reads a task, or says what the service answered.
async function addTask(baseUrl: string, apiKey: string, projectId: string, title: string) {
  const response = await fetch(`${baseUrl}/v1/tasks`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${apiKey}`,
      'Api-Version': apiVersion,
      'Content-Type': 'application/json',
    },
    body: JSON.stringify({ project_id: projectId, title }),
  });
  if (response.status !== 201) throw new Error(`POST /v1/tasks answered ${response.status}`);
  return (await response.json()) as Task;
}

async function readTask(baseUrl: string, apiKey: string, taskId: string) {
  const response = await fetch(`${baseUrl}/v1/tasks/${taskId}`, {
    headers: { Authorization: `Bearer ${apiKey}`, 'Api-Version': apiVersion },
  });
  if (response.status !== 200) {
    throw new Error(`GET /v1/tasks/${taskId} answered ${response.status}`);
  }
  return (await response.json()) as Task;
}

const pact = new PactV4({
  consumer: 'my-integration',
  provider: 'task-tracker',
  dir: path.join(__dirname, 'pacts'),
  logLevel: 'warn',
});
const someId = '0193a5b3-1d20-7e55-8c3f-6a7b8c9d0e12';
const json = { 'Content-Type': regex('^application/json(;.*)?$', 'application/json') };
const answeredIn = { ...json, 'Api-Version': apiVersion };

it('adds a task to a project', async () => {
  await pact
    .addInteraction()
    .given('a project exists')
    .uponReceiving('a request to add a task to a project')
    .withRequest('POST', '/v1/tasks', (request) => {
      request
        .headers({
          Authorization: 'Bearer my-key',
          'Api-Version': apiVersion,
          'Content-Type': 'application/json',
        })
        .jsonBody({
          project_id: fromProviderState('${project_id}', someId),
          title: 'Write the announcement',
        });
    })
    .willRespondWith(201, (response) => {
      response.headers(answeredIn).jsonBody({
        task_id: uuid(someId),
        project_id: uuid(someId),
        title: 'Write the announcement',
        status: 'pending',
      });
    })
    .executeTest(async (mock) => {
      const task = await addTask(mock.url, 'my-key', someId, 'Write the announcement');
      expect([task.title, task.status]).toEqual(['Write the announcement', 'pending']);
    });
});

it('reads a task', async () => {
  await pact
    .addInteraction()
    .given('a task exists', { status: 'in_progress', title: 'Write the announcement' })
    .uponReceiving('a request for a task in progress')
    .withRequest(
      'GET',
      fromProviderState('/v1/tasks/${task_id}', `/v1/tasks/${someId}`),
      (request) => {
        request.headers({ Authorization: 'Bearer my-key', 'Api-Version': apiVersion });
      },
    )
    .willRespondWith(200, (response) => {
      response.headers(answeredIn).jsonBody({
        task_id: uuid(someId),
        title: 'Write the announcement',
        status: 'in_progress',
      });
    })
    .executeTest(async (mock) => {
      const task = await readTask(mock.url, 'my-key', someId);
      expect([task.task_id, task.status]).toEqual([someId, 'in_progress']);
    });
});
