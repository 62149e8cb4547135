/** The JUnit report's times are in seconds, whichever way Pact spells an interaction's duration. */
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
    results: {
      interactionResults: [
        { consumer: 'c', provider: 'task-tracker', description: 'd', duration, result: 'OK' },
      ],
    },
  });
  expect(report).toContain(`<testcase classname="c → task-tracker" name="d" time="${time}">`);
});
