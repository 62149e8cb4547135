/**
 * `npm run check:breaking`: compares the newest released document in openapi/released/ with what
 * serves its clients now, and fails on a change that would break a client written against the
 * release. A release that is an API version's (versions.ts, `released`) is compared with that
 * version's made document, since the newest version may break with it; any other, with
 * openapi/openapi.yaml.
 * openapi-diff judges operations and request and response bodies; what it misses (parameters,
 * and removed fields, types and enum values in the shared schemas) is checked here.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import YAML from 'yaml';
import { openapiDocumentPath, projectRoot } from '../paths';
import { madeDocumentsFolder } from '../versions/documents';
import { versions } from '../versions/versions';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any part of any two documents
type Node = Record<string, any>;

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function resolver(document: Node) {
  return function resolve(node: Node | undefined): Node | undefined {
    if (node?.$ref === undefined) return node;
    const target = (node.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .reduce<Node | undefined>(
        (at, key) => at?.[key.replace(/~1/g, '/').replace(/~0/g, '~')],
        document,
      );
    return resolve(target);
  };
}

/** The names of the component schemas a request can carry (its body and parameters), directly or through others. */
function requestSchemas(document: Node): Set<string> {
  const names = new Set<string>();
  const visit = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    const ref = (node as Node).$ref;
    if (typeof ref === 'string') {
      const schema = /^#\/components\/schemas\/([^/]+)$/.exec(ref)?.[1];
      if (schema !== undefined && names.has(schema)) return;
      if (schema !== undefined) names.add(schema);
      visit(resolver(document)(node as Node));
      return;
    }
    for (const value of Object.values(node)) visit(value);
  };
  for (const item of Object.values<Node>(document.paths ?? {})) {
    visit(item.parameters);
    for (const method of methods.filter((m) => item[m])) {
      visit(item[method].parameters);
      visit(item[method].requestBody);
    }
  }
  return names;
}

function operations(document: Node): Map<string, { parameters: Node[] }> {
  const resolve = resolver(document);
  const found = new Map<string, { parameters: Node[] }>();
  for (const [route, item] of Object.entries<Node>(document.paths ?? {})) {
    for (const method of methods.filter((m) => item[m])) {
      const parameters = [...(item.parameters ?? []), ...(item[method].parameters ?? [])].map(
        (p: Node) => resolve(p)!,
      );
      found.set(`${method.toUpperCase()} ${route}`, { parameters });
    }
  }
  return found;
}

/** The values a schema, or the items of an array schema, is limited to. */
function enumOf(
  schema: Node | undefined,
  resolve: ReturnType<typeof resolver>,
): unknown[] | undefined {
  return schema?.enum ?? resolve(schema?.items)?.enum;
}

function schemaChanges(
  where: string,
  before: Node | undefined,
  after: Node | undefined,
  resolveBefore: ReturnType<typeof resolver>,
  resolveAfter: ReturnType<typeof resolver>,
): string[] {
  const was = resolveBefore(before);
  const is = resolveAfter(after);
  if (!was || !is) return [];
  const changes: string[] = [];
  if (was.type !== undefined && was.type !== is.type)
    changes.push(`${where}: type ${was.type} became ${is.type ?? 'untyped'}`);
  const valuesNow = enumOf(is, resolveAfter);
  const lostValues = (enumOf(was, resolveBefore) ?? []).filter(
    (value) => !(valuesNow ?? []).includes(value),
  );
  if (valuesNow && lostValues.length > 0)
    changes.push(`${where}: enum value(s) ${lostValues.join(', ')} removed`);
  return changes;
}

/** The newest release's version, or undefined when there is none. */
export function newestReleaseIn(folder: string): { version: string; file: string } | undefined {
  const versions = fs
    .readdirSync(folder)
    .filter((file) => /^\d+\.\d+\.\d+\.yaml$/.test(file))
    .map((file) => file.slice(0, -'.yaml'.length))
    .sort(compareVersions);
  const version = versions[versions.length - 1];
  return version === undefined
    ? undefined
    : { version, file: path.join(folder, `${version}.yaml`) };
}

/** Semantic versions (MAJOR.MINOR.PATCH) in order: negative when `a` comes first. */
export function compareVersions(a: string, b: string): number {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}

/**
 * What is wrong with the working document's `info.version` beside the newest release, if anything:
 * a document that differs from the release must carry a newer version, so that what a client
 * built against a version is never changed under the same number.
 */
export function versionProblem(released: Node, current: Node): string | undefined {
  const [was, is] = [released.info?.version, current.info?.version].map(String);
  if (!/^\d+\.\d+\.\d+$/.test(is)) return `info.version ${is} is not MAJOR.MINOR.PATCH`;
  if (isDeepStrictEqual(released, current)) return undefined;
  if (compareVersions(is, was) <= 0)
    return `the document differs from release ${was} but its info.version is ${is}: give it a newer version`;
  return undefined;
}

/** Every change from `released` to `current` that a client of `released` would trip on. */
export function findBreakingChanges(released: Node, current: Node): string[] {
  const changes: string[] = [];
  const resolveReleased = resolver(released);
  const resolveCurrent = resolver(current);
  const before = operations(released);
  const after = operations(current);

  for (const [operation, { parameters }] of before) {
    const now = after.get(operation);
    if (!now) {
      changes.push(`${operation}: operation removed`);
      continue;
    }
    const key = (p: Node) => `${p.in} ${p.name}`;
    const nowByKey = new Map(now.parameters.map((p) => [key(p), p]));
    for (const parameter of parameters) {
      const successor = nowByKey.get(key(parameter));
      const where = `${operation}: ${parameter.in} parameter ${parameter.name}`;
      if (!successor) changes.push(`${where} removed`);
      else {
        if (successor.required && !parameter.required) changes.push(`${where} became required`);
        changes.push(
          ...schemaChanges(
            where,
            parameter.schema,
            successor.schema,
            resolveReleased,
            resolveCurrent,
          ),
        );
      }
    }
    const releasedKeys = new Set(parameters.map(key));
    for (const parameter of now.parameters.filter((p) => p.required && !releasedKeys.has(key(p)))) {
      changes.push(`${operation}: new required ${parameter.in} parameter ${parameter.name}`);
    }
  }

  const requested = requestSchemas(current);
  for (const [name, schema] of Object.entries<Node>(released.components?.schemas ?? {})) {
    const successor = current.components?.schemas?.[name];
    if (!successor) {
      changes.push(`schema ${name} removed`);
      continue;
    }
    changes.push(
      ...schemaChanges(`schema ${name}`, schema, successor, resolveReleased, resolveCurrent),
    );
    for (const [property, definition] of Object.entries<Node>(
      resolveReleased(schema)?.properties ?? {},
    )) {
      const now = resolveCurrent(successor)?.properties?.[property];
      if (!now) changes.push(`schema ${name}: field ${property} removed`);
      else
        changes.push(
          ...schemaChanges(
            `schema ${name}.${property}`,
            definition,
            now,
            resolveReleased,
            resolveCurrent,
          ),
        );
    }
    // A field a request may leave out, now required: requests written against the release fail.
    // In a schema only answers use, a field made required takes nothing from a client.
    if (requested.has(name)) {
      const wasRequired = new Set<string>(resolveReleased(schema)?.required ?? []);
      for (const property of resolveCurrent(successor)?.required ?? []) {
        if (!wasRequired.has(property))
          changes.push(`schema ${name}: field ${property} became required in requests`);
      }
    }
  }
  return changes;
}

function newestRelease(folder: string): string {
  const newest = newestReleaseIn(folder);
  if (newest === undefined) throw new Error(`no released document in ${folder}`);
  return newest.file;
}

/** The document that serves the clients of the release at `releasedPath` now. */
function servingDocument(releasedPath: string): { file: string; version?: string } {
  const owner = versions.find(
    ({ released }) => released !== undefined && path.join(projectRoot, released) === releasedPath,
  );
  if (owner === undefined || owner === versions[0]) return { file: openapiDocumentPath };
  const file = path.join(projectRoot, madeDocumentsFolder, `${owner.version}.yaml`);
  return { file, version: owner.version };
}

function main(): void {
  const releasedPath = newestRelease(path.join(projectRoot, 'openapi', 'released'));
  const serving = servingDocument(releasedPath);
  const read = (file: string) => YAML.parse(fs.readFileSync(file, 'utf8')) as Node;
  const ours = findBreakingChanges(read(releasedPath), read(serving.file));
  // A version's document is named by its date, and the gate holds it to the release.
  const version =
    serving.version === undefined
      ? versionProblem(read(releasedPath), read(serving.file))
      : undefined;
  if (version !== undefined) ours.push(version);
  // openapi-diff reports every addition in full: megabytes for a grown document, past spawnSync's
  // default buffer of 1 MB (which would kill it and read as a failure).
  const diff = spawnSync(
    path.join(projectRoot, 'node_modules', '.bin', 'openapi-diff'),
    [releasedPath, serving.file],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  const relative = path.relative(projectRoot, releasedPath);
  if (diff.error) {
    console.error(`openapi-diff could not run: ${diff.error.message}`);
    process.exit(1);
  }
  if (diff.status !== 0)
    console.error(
      `openapi-diff found breaking changes against ${relative}:\n${diff.stdout}${diff.stderr}`,
    );
  for (const change of ours) console.error(`breaking: ${change}`);
  if (diff.status !== 0 || ours.length > 0) process.exit(1);
  const against =
    serving.version === undefined
      ? ''
      : ` (version ${serving.version}, ${path.relative(projectRoot, serving.file)})`;
  console.log(`No breaking change against ${relative}${against}.`);
}

if (require.main === module) main();
