/**
 * `npm run check:breaking`: compares openapi/openapi.yaml with the newest released document in
 * openapi/released/ and fails on a change that would break a client written against the release.
 * openapi-diff judges operations and request and response bodies; what it misses (parameters,
 * and removed fields, types and enum values in the shared schemas) is checked here.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { openapiDocumentPath, projectRoot } from '../paths';

type Node = Record<string, any>;

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function resolver(document: Node) {
  return function resolve(node: Node | undefined): Node | undefined {
    if (node?.$ref === undefined) return node;
    const target = (node.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .reduce<Node | undefined>((at, key) => at?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], document);
    return resolve(target);
  };
}

function operations(document: Node): Map<string, { parameters: Node[] }> {
  const resolve = resolver(document);
  const found = new Map<string, { parameters: Node[] }>();
  for (const [route, item] of Object.entries<Node>(document.paths ?? {})) {
    for (const method of methods.filter((m) => item[m])) {
      const parameters = [...(item.parameters ?? []), ...(item[method].parameters ?? [])].map((p: Node) => resolve(p)!);
      found.set(`${method.toUpperCase()} ${route}`, { parameters });
    }
  }
  return found;
}

/** The values a schema, or the items of an array schema, is limited to. */
function enumOf(schema: Node | undefined, resolve: ReturnType<typeof resolver>): unknown[] | undefined {
  return schema?.enum ?? resolve(schema?.items)?.enum;
}

function schemaChanges(where: string, before: Node | undefined, after: Node | undefined, resolveBefore: ReturnType<typeof resolver>, resolveAfter: ReturnType<typeof resolver>): string[] {
  const was = resolveBefore(before);
  const is = resolveAfter(after);
  if (!was || !is) return [];
  const changes: string[] = [];
  if (was.type !== undefined && was.type !== is.type) changes.push(`${where}: type ${was.type} became ${is.type ?? 'untyped'}`);
  const valuesNow = enumOf(is, resolveAfter);
  const lostValues = (enumOf(was, resolveBefore) ?? []).filter((value) => !(valuesNow ?? []).includes(value));
  if (valuesNow && lostValues.length > 0) changes.push(`${where}: enum value(s) ${lostValues.join(', ')} removed`);
  return changes;
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
        changes.push(...schemaChanges(where, parameter.schema, successor.schema, resolveReleased, resolveCurrent));
      }
    }
    const releasedKeys = new Set(parameters.map(key));
    for (const parameter of now.parameters.filter((p) => p.required && !releasedKeys.has(key(p)))) {
      changes.push(`${operation}: new required ${parameter.in} parameter ${parameter.name}`);
    }
  }

  for (const [name, schema] of Object.entries<Node>(released.components?.schemas ?? {})) {
    const successor = current.components?.schemas?.[name];
    if (!successor) {
      changes.push(`schema ${name} removed`);
      continue;
    }
    changes.push(...schemaChanges(`schema ${name}`, schema, successor, resolveReleased, resolveCurrent));
    for (const [property, definition] of Object.entries<Node>(resolveReleased(schema)?.properties ?? {})) {
      const now = resolveCurrent(successor)?.properties?.[property];
      if (!now) changes.push(`schema ${name}: field ${property} removed`);
      else changes.push(...schemaChanges(`schema ${name}.${property}`, definition, now, resolveReleased, resolveCurrent));
    }
  }
  return changes;
}

function newestRelease(folder: string): string {
  const versions = fs
    .readdirSync(folder)
    .filter((file) => /^\d+\.\d+\.\d+\.yaml$/.test(file))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  if (versions.length === 0) throw new Error(`no released document in ${folder}`);
  return path.join(folder, versions[versions.length - 1]);
}

function main(): void {
  const releasedPath = newestRelease(path.join(projectRoot, 'openapi', 'released'));
  const read = (file: string) => YAML.parse(fs.readFileSync(file, 'utf8')) as Node;
  const ours = findBreakingChanges(read(releasedPath), read(openapiDocumentPath));
  // openapi-diff reports every addition in full: megabytes for a grown document, past spawnSync's
  // default buffer of 1 MB (which would kill it and read as a failure).
  const diff = spawnSync(path.join(projectRoot, 'node_modules', '.bin', 'openapi-diff'), [releasedPath, openapiDocumentPath], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const relative = path.relative(projectRoot, releasedPath);
  if (diff.error) {
    console.error(`openapi-diff could not run: ${diff.error.message}`);
    process.exit(1);
  }
  if (diff.status !== 0) console.error(`openapi-diff found breaking changes against ${relative}:\n${diff.stdout}${diff.stderr}`);
  for (const change of ours) console.error(`breaking: ${change}`);
  if (diff.status !== 0 || ours.length > 0) process.exit(1);
  console.log(`No breaking change against ${relative}.`);
}

if (require.main === module) main();
