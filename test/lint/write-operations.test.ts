/**
 * What runs in a transaction is said by the method (handlers/operation.ts: the router reads it, the
 * handlers' types read it from `paths`); what a key may do is said by `x-required-scope`. The two
 * agree: every operation that changes something needs `write`, and every read needs `read`.
 */
import { loadDocument } from '../../src/http/document';
import { changingMethods } from '../../src/handlers/operation';

it('gives the write scope to exactly the operations whose method changes something', () => {
  const { definition } = loadDocument();
  const operations = Object.values(definition.paths ?? {}).flatMap((item) =>
    Object.entries(item as Record<string, { operationId?: string; 'x-required-scope'?: string }>)
      .filter(([, operation]) => typeof operation === 'object' && operation.operationId)
      .map(([method, operation]) => ({
        operationId: operation.operationId,
        changes: (changingMethods as readonly string[]).includes(method),
        scope: operation['x-required-scope'],
      })),
  );
  expect(operations.filter((operation) => operation.changes).length).toBeGreaterThan(0);
  expect(
    operations.filter((operation) => operation.scope !== (operation.changes ? 'write' : 'read')),
  ).toEqual([]);
});
