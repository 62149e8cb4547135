/**
 * What moving a client's exchange from one API version to another meets: the changes between the
 * two versions, and of those the ones that touch its operation — whose module changes the
 * operation's parameters, request body or the answer of that status in the document, or changes
 * the request itself on the way up. `upgrade-report` (src/contract-testing) tells a person.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Json, JsonObject, VersionChange, VersionedRequest } from './change';
import { withoutProse } from './document-diff';
import { versions, type SupportedVersion } from './versions';

export interface Step {
  /** The version that made the change. */
  version: string;
  change: VersionChange;
  /** The documents just before (older) and after (newer) it. */
  older: JsonObject;
  newer: JsonObject;
}

/**
 * Every change between `from` and `to` (either way round), oldest first, with the documents
 * around it, made from the newest document by undoing the changes one at a time.
 */
export function stepsBetween(
  from: string,
  to: string,
  newestDocument: JsonObject,
  registry: readonly SupportedVersion[] = versions,
): Step[] {
  const index = (version: string) => {
    const found = registry.findIndex((entry) => entry.version === version);
    if (found < 0) throw new Error(`${version} is not a supported version`);
    return found;
  };
  const [newerIndex, olderIndex] = [index(from), index(to)].sort((a, b) => a - b);
  const steps: Step[] = [];
  let document = newestDocument;
  for (const [i, entry] of registry.entries()) {
    if (i >= olderIndex) break;
    for (const change of entry.changes) {
      const older = change.document(structuredClone(document));
      if (i >= newerIndex) steps.push({ version: entry.version, change, older, newer: document });
      document = older;
    }
  }
  return steps.reverse();
}

const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** The operation's path, method and object in the document, found by its operationId. */
function operationOf(document: JsonObject, operationId: string) {
  for (const [route, item] of Object.entries((document.paths ?? {}) as JsonObject))
    for (const method of methods) {
      const operation = (item as JsonObject)[method] as JsonObject | undefined;
      if (operation?.operationId === operationId)
        return { route, method, item: item as JsonObject, operation };
    }
  return undefined;
}

/** `node` with every `$ref` into the document put in its place (a `$ref` met again inside itself is left). */
function inlined(document: JsonObject, node: Json | undefined, open: string[] = []): Json {
  if (node === null || typeof node !== 'object') return node ?? null;
  if (Array.isArray(node)) return node.map((item) => inlined(document, item, open));
  const ref = node.$ref;
  if (typeof ref === 'string' && ref.startsWith('#/') && !open.includes(ref)) {
    const target = ref
      .slice(2)
      .split('/')
      .reduce<Json | undefined>(
        (at, key) =>
          at !== null && typeof at === 'object' && !Array.isArray(at)
            ? at[key.replace(/~1/g, '/').replace(/~0/g, '~')]
            : undefined,
        document,
      );
    return inlined(document, target, [...open, ref]);
  }
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, inlined(document, value, open)]),
  );
}

/**
 * What a client of the operation sends and, for `status` (every status when undefined), receives,
 * as the document says it, prose aside.
 */
function contractOf(document: JsonObject, operationId: string, status?: number): Json {
  const found = operationOf(document, operationId);
  if (found === undefined) return null;
  const { route, method, item, operation } = found;
  const responses = (operation.responses ?? {}) as JsonObject;
  const kept: JsonObject = {
    ...operation,
    responses:
      status === undefined ? responses : { [String(status)]: responses[String(status)] ?? null },
  };
  const part = {
    paths: { [route]: { parameters: item.parameters ?? [], [method]: kept } },
    components: document.components ?? {},
  } as JsonObject;
  const whole = inlined(part, part.paths) as JsonObject;
  return withoutProse({ paths: whole } as JsonObject).paths ?? null;
}

/** Whether the step changes what a client of the operation sends or receives. */
export function touches(step: Step, request: VersionedRequest, status?: number): boolean {
  const { operationId } = request;
  if (
    !isDeepStrictEqual(
      contractOf(step.older, operationId, status),
      contractOf(step.newer, operationId, status),
    )
  )
    return true;
  if (step.change.request === undefined) return false;
  return !isDeepStrictEqual(step.change.request(structuredClone(request)), request);
}

/** The document's example of the operation's answer of that status (its JSON body), if it has one. */
export function exampleAnswer(document: JsonObject, operationId: string, status: number): Json {
  const found = operationOf(document, operationId);
  const response = inlined(
    document,
    ((found?.operation.responses ?? {}) as JsonObject)[String(status)],
  ) as JsonObject | null;
  const content = (response?.content ?? {}) as JsonObject;
  const media = (content['application/json'] ?? Object.values(content)[0] ?? {}) as JsonObject;
  if (media.example !== undefined) return media.example;
  const [first] = Object.values((media.examples ?? {}) as JsonObject) as JsonObject[];
  return first?.value ?? null;
}
