// The real delivery thread, which runs out of memory for real, as a thread swamped by a tenant's
// work would, once it has run for 1.5 s while the file `diesWhile(database)` names exists (a
// jest test's process.env is not the one a thread inherits, so the file is named by the database).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { setInterval } = require('node:timers');
const { URL } = require('node:url');
const { workerData } = require('node:worker_threads');

const diesWhile = (database) =>
  path.join(os.tmpdir(), `${new URL(database.url).pathname.slice(1)}.thread-dies`);
module.exports = { diesWhile };

if (workerData) {
  require(path.join(__dirname, '../../../dist/src/webhooks/delivery-thread-entry.js'));
  const startedAt = Date.now();
  const told = diesWhile(workerData.config.database);
  setInterval(() => {
    if (Date.now() - startedAt < 1500 || !fs.existsSync(told)) return;
    const hoard = [];
    for (;;) hoard.push(new Array(100_000).fill(hoard.length));
  }, 50).unref();
}
