import fs from 'node:fs';
import path from 'node:path';

/** The project's root (the folder of package.json), whether running from src/ or dist/src/. */
export const projectRoot = findPackageRoot(__dirname);

export const openapiDocumentPath = path.join(projectRoot, 'openapi', 'openapi.yaml');

/**
 * Where the build (scripts/build-if-stale.js) keeps a YAML document of the project's parsed, with
 * the hash of the text it came from: dist/openapi/openapi.json for openapi/openapi.yaml.
 */
export const parsedDocumentPathOf = (yamlFile: string) =>
  path.join(projectRoot, 'dist', path.relative(projectRoot, yamlFile).replace(/\.yaml$/, '.json'));

/** The embedded default database. */
export const defaultSqliteFile = path.join(projectRoot, 'data', 'tasks.sqlite');

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}
