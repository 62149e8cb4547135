/**
 * The catalogue of provider states as documented (README and the document's info.description)
 * and as handled hold together: every documented state has a handler taking the documented
 * parameters, every handler is documented, the event messages are the ones produced, and the
 * README's example consumer test is the one `make test` runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { messageDescriptions } from '../../src/contract-testing/message-producers';
import { providerStates } from '../../src/contract-testing/provider-states';
import { openapiDocumentPath, projectRoot } from '../../src/paths';

const readme = fs.readFileSync(path.join(projectRoot, 'README.md'), 'utf8');
const description: string = YAML.parse(fs.readFileSync(openapiDocumentPath, 'utf8')).info
  .description;

/** The catalogue table's rows: each state's name and the parameters it lists. */
function catalogue(text: string): Record<string, string[]> {
  const table = text.slice(text.indexOf('| state | parameters'));
  const rows = table
    .split('\n')
    .slice(2)
    .filter((_, index, lines) => lines.slice(0, index + 1).every((line) => line.startsWith('|')));
  return Object.fromEntries(
    rows.map((row) => {
      const [state, parameters] = row.split(' | ');
      return [
        state.replace(/^\| `|`$/g, ''),
        [...parameters.replace(/\([^)]*\)/g, '').matchAll(/`(\w+)`/g)].map((match) => match[1]),
      ];
    }),
  );
}

const handled = Object.fromEntries(
  Object.entries(providerStates).map(([name, state]) => [name, state.parameters]),
);

test.each([
  ['the README', readme.slice(readme.indexOf('### Contract tests for integrations'))],
  ["the document's info.description", description],
])('%s documents exactly the states there are handlers for, with their parameters', (_, text) => {
  expect(catalogue(text)).toEqual(handled);
});

test.each([
  ['the README', readme],
  ["the document's info.description", description],
])('%s names every event message the provider produces', (_, text) => {
  const flat = text.replace(/\s+/g, ' ');
  for (const message of messageDescriptions) expect(flat).toContain(`\`${message}\``);
});

test('the README shows the example consumer test that make test runs, whole', () => {
  const example = fs.readFileSync(
    path.join(projectRoot, 'clients/typescript/examples/pact-consumer.pact.test.ts'),
    'utf8',
  );
  expect(readme).toContain('```ts\n' + example + '```');
});
