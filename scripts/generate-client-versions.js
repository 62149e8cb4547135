#!/usr/bin/env node
/**
 * The client kit's types of the older API versions, one file per version beside the newest's
 * (clients/typescript/src/api.ts): openapi-typescript over each made document
 * openapi/versions/VERSION.yaml, written to clients/typescript/src/api-VERSION.ts, with the same
 * settings as the newest's. The versions are the documents found there, so a version made by
 * `npm run -s versions -- write` is generated with no change here.
 *
 *   node scripts/generate-client-versions.js           writes them, and removes an api-VERSION.ts
 *                                                      whose document is gone
 *   node scripts/generate-client-versions.js --check   fails when one is stale, missing or left over
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const documents = path.join(root, 'openapi', 'versions');
const kitSource = path.join(root, 'clients', 'typescript', 'src');
const cli = path.join(root, 'node_modules', 'openapi-typescript', 'bin', 'cli.js');
const check = process.argv.includes('--check');
const versionFile = /^(\d{4}-\d\d-\d\d)\.yaml$/;
const generatedFile = /^api-(\d{4}-\d\d-\d\d)\.ts$/;

const versions = fs
  .readdirSync(documents)
  .map((name) => versionFile.exec(name)?.[1])
  .filter(Boolean)
  .sort()
  .reverse();
if (versions.length === 0) {
  console.error(`No VERSION.yaml in ${path.relative(root, documents)}: nothing to generate.`);
  process.exit(1);
}

let failed = false;
for (const version of versions) {
  const output = path.join('clients', 'typescript', 'src', `api-${version}.ts`);
  if (check && !fs.existsSync(path.join(root, output))) {
    console.error(`${output} is missing: run npm run -s generate.`);
    failed = true;
    continue;
  }
  const args = [
    cli,
    path.join('openapi', 'versions', `${version}.yaml`),
    '--default-non-nullable',
    'false',
    '-o',
    output,
    '--export-type',
    ...(check ? ['--check'] : []),
  ];
  const run = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) {
    console.error(`${output} is not what openapi/versions/${version}.yaml makes.`);
    failed = true;
  }
}

// A file of a version no longer made (its document removed) is stale too.
for (const name of fs.readdirSync(kitSource)) {
  const version = generatedFile.exec(name)?.[1];
  if (!version || versions.includes(version)) continue;
  const file = path.join('clients', 'typescript', 'src', name);
  if (check) {
    console.error(`${file} has no openapi/versions/${version}.yaml: run npm run -s generate.`);
    failed = true;
  } else {
    fs.rmSync(path.join(root, file));
    console.log(`removed ${file}: openapi/versions/${version}.yaml is gone`);
  }
}
process.exit(failed ? 1 : 0);
