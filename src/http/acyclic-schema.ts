/**
 * Schemas of the dereferenced document for tools that walk them whole: a recursive schema is a
 * circular object once dereferenced.
 */

/**
 * A dereferenced schema with each place where it holds itself again (a TaskFilter's `all` holds
 * TaskFilters) made `{}`, any value: fast-json-stringify and ajv refuse a circular schema (they
 * would recurse for ever), and take this one, checking the outermost level of such a value. A
 * schema without such a place is answered as it is.
 */
export function withoutCycles<T extends object>(node: T, within = new Set<object>()): T {
  within.add(node);
  let copy: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(node)) {
    if (value === null || typeof value !== 'object') continue;
    const inner = within.has(value) ? {} : withoutCycles(value as object, within);
    if (inner !== value)
      (copy ??= (Array.isArray(node) ? [...node] : { ...node }) as Record<string, unknown>)[key] =
        inner;
  }
  within.delete(node);
  return (copy as T | undefined) ?? node;
}
