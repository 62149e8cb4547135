/**
 * The JUnit report's times are in seconds, whichever way Pact spells an interaction's duration;
 * a failure carries Pact's mismatches, then what was sent and answered.
 */
import { junitReport } from '../../src/contract-testing/junit';
import type { PactFile } from '../../src/contract-testing/pact-files';

const pact: PactFile = {
  path: 'p.json',
  consumer: 'c',
  provider: 'task-tracker',
  interactions: [],
  messagesOnly: false,
};

it.each([
  ['1.439s', '1.439'],
  ['1s 439ms', '1.439'],
  ['915ms', '0.915'],
  ['2m 3s', '123.000'],
])('writes a duration of %s as time="%s"', (duration, time) => {
  const report = junitReport([pact], {
    passed: true,
    providerFailures: [],
    exchanges: [],
    results: {
      interactionResults: [
        { consumer: 'c', provider: 'task-tracker', description: 'd', duration, result: 'OK' },
      ],
    },
  });
  expect(report).toContain(`<testcase classname="c → task-tracker" name="d" time="${time}">`);
});

it("puts what a failing interaction sent and was answered in its failure, after Pact's mismatches", () => {
  const report = junitReport([pact], {
    passed: false,
    providerFailures: [],
    exchanges: [
      {
        consumer: 'c',
        interaction: 'd',
        method: 'POST',
        path: '/v1/tasks?x=1',
        headers: [['Api-Version', '2026-12-15']],
        status: 400,
        contentType: 'application/problem+json',
        problem: {
          detail: 'The request does not match the contract.',
          errors: [
            { in: 'body', pointer: '', message: 'must be object' },
            { in: 'query', name: 'x', message: 'is not a parameter of this operation' },
          ],
          errors_not_listed: 3,
        },
      },
      { consumer: 'other', interaction: 'd', method: 'GET', path: '/v1/other', headers: [] },
    ],
    results: {
      interactionResults: [
        {
          consumer: 'c',
          provider: 'task-tracker',
          description: 'd',
          result: 'Error',
          mismatch: { mismatches: [{ mismatch: 'expected 201 but was 400' }] },
        },
      ],
    },
  });
  expect(report).toContain(
    [
      '<failure message="expected 201 but was 400">expected 201 but was 400',
      'sent POST /v1/tasks?x=1',
      '  Api-Version: 2026-12-15',
      'answered 400 (application/problem+json)',
      '  detail: The request does not match the contract.',
      '  errors:',
      '    body (the whole body): must be object',
      '    query x: is not a parameter of this operation',
      '    and 3 more not listed</failure>',
    ].join('\n'),
  );
});
