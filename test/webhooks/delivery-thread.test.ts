/** The main thread's side of the delivery thread, against threads that fail. */
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { startDeliveryThread } from '../../src/webhooks/delivery-thread';
import { capturedLog } from '../support/captured-log';

const start = (thread: string, stopWithinMs?: number) => {
  const log = capturedLog();
  const running = startDeliveryThread(loadConfig({}), {
    logger: createLogger('info', log.stream),
    addMetrics: () => {},
    entry: path.join(__dirname, 'threads', thread),
    stopWithinMs,
  });
  return { log, running };
};

it('starts a thread that dies again, a second later, and stops for good when asked', async () => {
  const { log, running } = start('dies.js');
  await log.waitFor('thread started', 2, 5000);
  expect(
    log.withMessage('the webhook delivery thread stopped; starting it again'),
  ).not.toHaveLength(0);
  await running.stop();
  const started = log.withMessage('thread started').length;
  await new Promise((resolve) => setTimeout(resolve, 1500));
  expect(log.withMessage('thread started')).toHaveLength(started);
});

it('asks a thread started again to plan whatever was numbered while it was down', async () => {
  const { log, running } = start('tells.js');
  await log.waitFor('thread started');
  running.plan(['die']);
  await log.waitFor('the webhook delivery thread stopped; starting it again');
  running.plan(['tenant-1']);
  await log.waitFor('thread started', 2, 5000);
  await log.waitFor('got catch-up');
  await running.stop();
  expect(log.withMessage('got plan')).toHaveLength(1);
});

it('fails a lookup at once while no thread runs', async () => {
  const { log, running } = start('dies.js');
  await log.waitFor('the webhook delivery thread stopped; starting it again');
  await expect(running.resolver.resolve('example.test', 'tenant')).rejects.toThrow(
    /thread is not running|thread stopped/,
  );
  await running.stop();
});

it('gives up on a thread that answers nothing: a scrape and a lookup at their timeouts, stop() at its own', async () => {
  const { running } = start('deaf.js', 300);
  const began = performance.now();
  await running.flushMetrics(200);
  expect(performance.now() - began).toBeGreaterThanOrEqual(190);
  await expect(
    running.resolver.resolve('example.test', 'tenant', AbortSignal.timeout(200)),
  ).rejects.toThrow(/timed out|aborted/i);
  const stopping = performance.now();
  await running.stop();
  expect(performance.now() - stopping).toBeGreaterThanOrEqual(290);
});
