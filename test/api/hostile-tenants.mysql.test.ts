/**
 * The matrix of hostile tenants at small scale (issue 44; `make bench` runs it in full): one
 * service, in a process of its own, with at once one hostile tenant of each kind (each way its
 * receivers misbehave, each way its names do, and one whose events carry 10,000-character
 * descriptions), each with 5 endpoints and 5 events, beside a bystander writing 5 creates a
 * second for 15 s. The bystander's webhooks keep coming (p99 under 5 s, none lost or sent
 * twice), the delivery thread never restarts and stays under its heap limit, and the service's
 * RSS under 300 MB.
 */
import {
  nameKinds,
  percentile,
  receiverKinds,
  runHostileTenants,
  targets,
  type HostileTenant,
} from '../support/hostile-tenants';

/**
 * The bench's 2 s p99 is a quiet machine's; beside CI's other lane one late webhook of 64 was
 * 2,024 ms. Under 5 s still tells a held bystander from a free one: hostile receivers hold an
 * attempt for the 10 s timeout.
 */
const p99UnderLoadMs = 5000;
import { mysqlServerUrl } from '../support/test-database';

const small = { receivers: 'ok', names: 'ok', endpoints: 5, eventChars: 20, events: 5 } as const;
const tenants: HostileTenant[] = [
  ...receiverKinds.map((receivers) => ({ ...small, receivers })),
  ...nameKinds.map((names) => ({ ...small, names })),
  { ...small, eventChars: 10_000 },
];

it('keeps a bystander’s webhooks on time beside a hostile tenant of each kind, with the thread alive and memory bounded', async () => {
  const r = await runHostileTenants(tenants, { mysqlUrl: mysqlServerUrl, seconds: 15 });
  const [p50, p99] = [percentile(r.delays, 50), percentile(r.delays, 99)];
  console.log(
    `hostile tenants (${tenants.length}): bystander ${r.delays.length} delivered, p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, ` +
      `lost ${r.lost}, sent twice ${r.sentTwice}; thread restarts ${r.threadRestarts}, heap ${r.threadHeapMb.toFixed(1)} of ${r.threadHeapLimitMb.toFixed(0)} MB; ` +
      `service RSS ${r.rssMb.toFixed(0)} MB; ${r.seconds.toFixed(1)} s`,
  );
  expect(r.delays.length).toBeGreaterThan(40);
  expect(p99).toBeLessThan(p99UnderLoadMs);
  expect(r.lost).toBe(0);
  expect(r.sentTwice).toBe(0);
  expect(r.threadRestarts).toBe(0);
  expect(r.threadHeapMb).toBeGreaterThan(0);
  expect(r.threadHeapMb).toBeLessThan(r.threadHeapLimitMb);
  expect(r.rssMb).toBeLessThan(targets.rssMb);
}, 120_000);
