// jest's globalSetup: builds dist/ when a source is newer than it, for what the tests run compiled
// (the CLIs, the webhook delivery thread), so a test never runs code older than its sources.
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');

module.exports = () => {
  const build = spawnSync(
    process.execPath,
    [path.join(__dirname, '../../scripts/build-if-stale.js')],
    {
      stdio: 'inherit',
    },
  );
  if (build.status !== 0) throw new Error('building dist/ for the tests failed');
};
