/**
 * A jest filter (`jest --filter`) for the contract run: keeps the test files that call the typed
 * client (`.client(`). Only its requests go through Prism's validating proxy (test/support/
 * test-service.ts); a file without one sends exactly what it sends in the sqlite project, so a
 * second run of it checks nothing more.
 */
'use strict';
const fs = require('node:fs');

module.exports = async (testPaths) => ({
  filtered: testPaths
    .filter((testPath) => fs.readFileSync(testPath, 'utf8').includes('.client('))
    .map((test) => ({ test })),
});
