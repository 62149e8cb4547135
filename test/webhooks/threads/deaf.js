// A delivery thread that answers nothing: not a flush, not a lookup, not a stop.
const { parentPort } = require('node:worker_threads');
parentPort.on('message', () => {});
