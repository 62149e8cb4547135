/**
 * The resolver's bounds, against a real name server on loopback whose names never answer (a
 * tenant's own name server gone silent): a name is looked up once however many ask for it, and one
 * tenant's names waiting for lookups are capped, while another tenant's are looked up meanwhile.
 */
import { createResolver, pendingPerTenant } from '../../src/webhooks/dns-lookups';
import { startNameServer, type NameServer } from '../support/name-server';

let names: NameServer;
beforeEach(async () => {
  names = await startNameServer({ 'fine.test': { addresses: ['127.0.0.1'], ttl: 60 } });
});
afterEach(() => names.stop());

const resolverOn = (server: NameServer) =>
  createResolver({ servers: [server.address], timeoutMs: 300, answerLocalhost: false });
const settled = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (error: NodeJS.ErrnoException) => error.code,
  );

it("looks a name up once however many ask for it while it waits its turn or runs: it holds one of the tenant's places", async () => {
  const others = Array.from({ length: pendingPerTenant - 1 }, (_, i) => `other${i}.test`);
  for (const name of ['silent.test', ...others])
    names.names.set(name, { addresses: ['127.0.0.1'], silent: 'never' });
  const resolver = resolverOn(names);
  // More than the tenant may run at once: most of these wait for a turn.
  const asked = Array.from({ length: 1000 }, () =>
    settled(resolver.resolve('silent.test', 'hostile')),
  );
  // Had each ask taken a place, these would be refused with EBUSY.
  const rest = others.map((name) => settled(resolver.resolve(name, 'hostile')));
  expect(new Set(await Promise.all([...asked, ...rest]))).toEqual(new Set(['ETIMEOUT']));
  // One lookup: its A and AAAA questions.
  expect(names.queries.get('silent.test')).toBe(2);
}, 60_000);

it("caps one tenant's names waiting for lookups, failing more at once, while another tenant's names are looked up", async () => {
  const hostile = Array.from({ length: pendingPerTenant + 10 }, (_, i) => `silent${i}.test`);
  for (const name of hostile) names.names.set(name, { addresses: ['127.0.0.1'], silent: 'never' });
  const resolver = resolverOn(names);
  const outcomes = hostile.map((name) => settled(resolver.resolve(name, 'hostile')));
  // Past the cap the tenant's lookups fail at once, with nothing asked of its name server.
  const past = await Promise.race([
    Promise.all(outcomes.slice(pendingPerTenant)),
    new Promise((resolve) => setTimeout(() => resolve('still waiting'), 500)),
  ]);
  expect(past).toEqual(Array(10).fill('EBUSY'));
  for (const name of hostile.slice(pendingPerTenant))
    expect(names.queries.get(name)).toBeUndefined();
  // Another tenant is not held behind them.
  const began = performance.now();
  await expect(resolver.resolve('fine.test', 'bystander')).resolves.toEqual([
    { address: '127.0.0.1', family: 4 },
  ]);
  expect(performance.now() - began).toBeLessThan(1000);
  // The failure past the cap is not kept: once the tenant's lookups end, the name is asked again.
  await Promise.all(outcomes);
  await expect(settled(resolver.resolve(hostile[pendingPerTenant], 'hostile'))).resolves.toBe(
    'ETIMEOUT',
  );
  expect(names.queries.get(hostile[pendingPerTenant])).toBe(2);
}, 60_000);
