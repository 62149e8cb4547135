/**
 * The handlers' types give a transaction to the operations in `writeOperations`; the router runs
 * in a transaction those the document gives `x-required-scope: write`. The two lists are one.
 */
import { loadDocument } from '../../src/http/document';
import { writeOperations } from '../../src/handlers/operation';

it('lists as write operations exactly those the document gives the write scope', () => {
  const { definition } = loadDocument();
  const written = Object.values(definition.paths ?? {}).flatMap((item) =>
    Object.values(item as Record<string, { operationId?: string; 'x-required-scope'?: string }>)
      .filter((operation) => operation?.['x-required-scope'] === 'write')
      .map((operation) => operation.operationId),
  );
  expect(written.length).toBeGreaterThan(0);
  expect([...written].sort()).toEqual([...writeOperations].sort());
});
