// A delivery thread that says it started, then dies.
const { parentPort } = require('node:worker_threads');
parentPort.postMessage({ type: 'log', text: '{"msg":"thread started"}\n' });
setTimeout(() => process.exit(1), 50);
