/**
 * What runs in a transaction is said by the method (handlers/operation.ts: the router reads it, the
 * handlers' types read it from `paths`), but for the reads made by POST (`readingPosts`); what a
 * key may do is said by `x-required-scope`. The two agree: every operation that changes something
 * needs `write`, and every read needs `read`.
 */
import { loadDocument } from '../../src/http/document';
import { changingMethods, readingPosts } from '../../src/handlers/operation';

it('gives the write scope to exactly the operations whose method changes something', () => {
  const { definition } = loadDocument();
  const operations = Object.values(definition.paths ?? {}).flatMap((item) =>
    Object.entries(item as Record<string, { operationId?: string; 'x-required-scope'?: string }>)
      .filter(([, operation]) => typeof operation === 'object' && operation.operationId)
      .map(([method, operation]) => ({
        operationId: operation.operationId,
        changes:
          (changingMethods as readonly string[]).includes(method) &&
          !(readingPosts as readonly string[]).includes(operation.operationId!),
        scope: operation['x-required-scope'],
      })),
  );
  expect(operations.filter((operation) => operation.changes).length).toBeGreaterThan(0);
  // Each read made by POST is an operation of the document, with the method it is named for.
  for (const operationId of readingPosts)
    expect(operations.find((operation) => operation.operationId === operationId)).toBeDefined();
  expect(
    operations.filter((operation) => operation.scope !== (operation.changes ? 'write' : 'read')),
  ).toEqual([]);
});
