// A delivery thread that logs each message it gets, and dies when told to plan the tenant "die".
const { parentPort } = require('node:worker_threads');
const log = (msg) => parentPort.postMessage({ type: 'log', text: JSON.stringify({ msg }) + '\n' });
log('thread started');
parentPort.on('message', (message) => {
  log(`got ${message.type}`);
  if (message.type === 'plan' && message.tenantIds.includes('die')) process.exit(1);
  if (message.type === 'stop') parentPort.postMessage({ type: 'stopped' });
});
