#!/usr/bin/env node
/**
 * Builds dist/ with tsc only when a source is newer than the last build, so `npm start` and the
 * CLIs start at once on an installed clone. What the build reads: src/, generated/, knexfile.ts,
 * the tsconfig files, the lockfile (a dependency's types can change the output) and the OpenAPI
 * documents (the contract, and the older versions' made ones), which it parses once into
 * dist/openapi/ for the service to start from.
 * `--force` builds whatever the times say (`npm run build`).
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const stamp = path.join(root, 'dist', '.build-stamp');
const inputs = [
  'src',
  'generated',
  'knexfile.ts',
  'tsconfig.json',
  'tsconfig.build.json',
  'package-lock.json',
  'openapi/openapi.yaml',
  'openapi/versions',
];

/** The newest modification time under a file or folder (0 when it does not exist). */
function newest(target) {
  let stat;
  try {
    stat = fs.statSync(target);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs; // a file removed changes its folder's time
  for (const entry of fs.readdirSync(target))
    latest = Math.max(latest, newest(path.join(target, entry)));
  return latest;
}

function builtAt() {
  try {
    return fs.statSync(stamp).mtimeMs;
  } catch {
    return -1;
  }
}

/**
 * The documents parsed (the contract and each older version's made one), with the hash of each
 * text: the service uses a parse only for that same text.
 */
function writeParsedDocuments() {
  const { yamlHash } = require(path.join(root, 'dist', 'src', 'http', 'document.js'));
  const { parsedDocumentPathOf, openapiDocumentPath } = require(
    path.join(root, 'dist', 'src', 'paths.js'),
  );
  const versions = path.join(root, 'openapi', 'versions');
  const made = fs.existsSync(versions)
    ? fs.readdirSync(versions).filter((name) => name.endsWith('.yaml'))
    : [];
  for (const file of [openapiDocumentPath, ...made.map((name) => path.join(versions, name))]) {
    const yaml = fs.readFileSync(file, 'utf8');
    const parsed = parsedDocumentPathOf(file);
    fs.mkdirSync(path.dirname(parsed), { recursive: true });
    fs.writeFileSync(
      parsed,
      JSON.stringify({ sha256: yamlHash(yaml), document: require('yaml').parse(yaml) }),
    );
  }
}

const force = process.argv.includes('--force');
const sourcesAt = Math.max(...inputs.map((input) => newest(path.join(root, input))));
if (force || sourcesAt >= builtAt()) {
  const startedAt = Date.now();
  const tsc = spawnSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.build.json')],
    { stdio: 'inherit', cwd: root },
  );
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
  writeParsedDocuments();
  fs.mkdirSync(path.dirname(stamp), { recursive: true });
  // Stamped with the time the build began: a source saved during the build is built next time.
  fs.writeFileSync(stamp, '');
  fs.utimesSync(stamp, new Date(startedAt), new Date(startedAt));
}
