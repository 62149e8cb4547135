#!/usr/bin/env node
/**
 * The failures of the whole suite's jest runs in short, from their JSON results (`--json
 * --outputFile`): each failing test's file, name and the first lines of its message, at most 80
 * lines in all. run-tests.sh prints it last, so a log kept only in part (its head and tail, as
 * CI's) still says what failed and why, whichever lane failed first.
 *   node test/failure-digest.js RESULTS.json...
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const linesPerFailure = 12;
const widest = 160;
const most = 80;

const plain = (text) => text.replace(/\u001b\[[0-9;]*m/g, '');
const first = (message) =>
  plain(message)
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== '' && !/^\s+at /.test(line))
    .slice(0, linesPerFailure)
    .map((line) => '  ' + line.slice(0, widest));

const out = [];
for (const file of process.argv.slice(2)) {
  if (!fs.existsSync(file)) continue;
  const results = JSON.parse(fs.readFileSync(file, 'utf8'));
  for (const suite of results.testResults) {
    const name = path.relative(process.cwd(), suite.name);
    const failed = suite.assertionResults.filter((test) => test.status === 'failed');
    for (const test of failed)
      out.push(`${name}: ${test.fullName}`, ...first(test.failureMessages.join('\n')));
    // A file that failed outside its tests (it did not compile, or a hook threw before any ran).
    if (failed.length === 0 && suite.status === 'failed')
      out.push(`${name}`, ...first(suite.message || 'failed'));
  }
}
if (out.length > 0) {
  console.log('Failures in short (the messages above have them whole):');
  console.log(out.slice(0, most).join('\n'));
  if (out.length > most) console.log(`… and ${out.length - most} lines more`);
}
