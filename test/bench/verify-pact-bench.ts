/**
 * make bench, verify-pact part: `npm run -s contract -- verify-pact` over a pact of 50
 * interactions, a mix a consumer writes (states with injected ids, an ETag, lists, the feed, a
 * 404 and a 401, and event messages), as a user runs it. The time per interaction is the
 * verification's own (the command prints it; the sandbox's start is excluded), worst of 3 runs.
 * Target: under 150 ms per interaction on two cores.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../src/paths';
import { anyValue, fromState, readOf } from '../contract-testing/pacts';

const rounds = 3;
const targetMs = 150;
const someId = '0193a5b3-1d20-7e55-8c3f-6a7b8c9d0e12';
const auth = { Authorization: 'Bearer any-key' };

/** Ten kinds of interaction; five of each make the pact's fifty. */
function interactionsOfRound(n: number) {
  const http = [
    readOf(
      `a project is read ${n}`,
      [{ name: 'a project exists', params: { name: `P${n}` } }],
      '/v1/projects/${project_id}',
      { status: 200 },
    ),
    readOf(
      `a task is read ${n}`,
      [{ name: 'a task exists', params: { status: 'done' } }],
      '/v1/tasks/${task_id}',
      { status: 200 },
    ),
    readOf(
      `tasks are listed ${n}`,
      [{ name: 'a project with tasks exists' }],
      '/v1/projects/${project_id}/tasks',
      { status: 200 },
    ),
    readOf(`a missing task ${n}`, [{ name: 'nothing exists' }], '/v1/tasks/${task_id}', {
      status: 404,
    }),
    readOf(
      `an endpoint is read ${n}`,
      [{ name: 'a webhook endpoint exists' }],
      '/v1/webhook-endpoints/${webhook_endpoint_id}',
      { status: 200 },
    ),
    {
      description: `a task is moved with its ETag ${n}`,
      providerStates: [{ name: 'a task exists' }],
      request: {
        method: 'PATCH',
        path: `/v1/tasks/${someId}`,
        headers: { ...auth, 'Content-Type': 'application/json', 'If-Match': '"x"' },
        body: { status: 'in_progress' },
        generators: {
          path: fromState('/v1/tasks/${task_id}'),
          header: { 'If-Match': fromState('${etag}') },
        },
      },
      response: { status: 200, body: { status: 'in_progress' } },
    },
    {
      description: `the feed is read ${n}`,
      providerStates: [{ name: 'the feed has events' }],
      request: {
        method: 'GET',
        path: '/v1/events',
        query: { cursor: 'x' },
        headers: auth,
        generators: { query: { cursor: fromState('${cursor}') } },
      },
      response: { status: 200 },
    },
    {
      description: `an invalid key ${n}`,
      request: {
        method: 'GET',
        path: '/v1/projects',
        headers: { Authorization: 'Bearer invalid' },
      },
      response: { status: 401 },
    },
  ];
  const message = (type: string, states: object[]) => ({
    type: 'Asynchronous/Messages',
    key: `${type}-${n}`,
    description: `a ${type} event`,
    providerStates: states,
    contents: {
      content: { type, event_id: someId },
      contentType: 'application/json',
      encoded: false,
    },
    matchingRules: { body: { '$.event_id': anyValue } },
    metadata: { contentType: 'application/json' },
  });
  return {
    http,
    messages: [
      message('task.updated', [{ name: 'a task exists' }]),
      message('project.created', []),
    ],
  };
}

function writePact(folder: string): string {
  const interactions: object[] = [];
  for (let n = 1; n <= 5; n++) {
    const { http, messages } = interactionsOfRound(n);
    interactions.push(
      ...http.map((interaction) => ({ type: 'Synchronous/HTTP', ...interaction })),
      ...messages,
    );
  }
  const file = path.join(folder, 'bench-consumer-task-tracker.json');
  fs.writeFileSync(
    file,
    JSON.stringify({
      consumer: { name: 'bench-consumer' },
      provider: { name: 'task-tracker' },
      interactions,
      metadata: { pactSpecification: { version: '4.0' } },
    }),
  );
  return file;
}

function verify(file: string): { count: number; ms: number } {
  const run = spawnSync(
    process.execPath,
    [path.join(projectRoot, 'dist', 'src', 'cli', 'contract.js'), 'verify-pact', file],
    {
      cwd: projectRoot,
      env: { ...process.env, DATABASE_URL: '' },
      encoding: 'utf8',
    },
  );
  const summary = /verify-pact: (\d+) interactions of \d+ pact\(s\) verified in (\d+) ms/.exec(
    run.stdout,
  );
  if (run.status !== 0 || !summary)
    throw new Error(`verify-pact failed (${run.status}):\n${run.stdout}\n${run.stderr}`);
  return { count: Number(summary[1]), ms: Number(summary[2]) };
}

function main() {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-verify-pact-bench-'));
  try {
    const file = writePact(folder);
    const runs = Array.from({ length: rounds }, () => verify(file));
    const perInteraction = runs.map((run) => run.ms / run.count);
    const worst = Math.max(...perInteraction);
    console.log(
      '\nverify-pact over a pact of %d interactions (sandbox start excluded), %d runs:',
      runs[0].count,
      rounds,
    );
    console.log('  verification            %s ms', runs.map((run) => run.ms).join(', '));
    console.log(
      '  per interaction, worst  %s ms (target %d: %s)',
      worst.toFixed(1),
      targetMs,
      worst < targetMs ? 'met' : 'NOT met',
    );
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

main();
