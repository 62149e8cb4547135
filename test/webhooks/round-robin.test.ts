/** The order of a look's claims: tenants in turn, each tenant's endpoints from where it left off. */
import { RoundRobin } from '../../src/webhooks/round-robin';

const due = (tenantId: string, endpointId: string) => ({ tenantId, endpointId });
const ids = (list: Array<{ endpointId: string }>) => list.map((item) => item.endpointId);

it('takes the tenants in turn, one endpoint each, whatever order they were found in', () => {
  const roundRobin = new RoundRobin();
  const order = roundRobin.order([
    due('t1', 'a3'),
    due('t1', 'a1'),
    due('t1', 'a2'),
    due('t2', 'b1'),
    due('t3', 'c2'),
    due('t3', 'c1'),
  ]);
  expect(ids(order)).toEqual(['a1', 'b1', 'c1', 'a2', 'c2', 'a3']);
});

it("starts each tenant's turn after the endpoint it last claimed for", () => {
  const roundRobin = new RoundRobin();
  const found = [due('t1', 'a1'), due('t1', 'a2'), due('t1', 'a3'), due('t2', 'b1')];
  roundRobin.claimed(due('t1', 'a2'));
  expect(ids(roundRobin.order(found))).toEqual(['a3', 'b1', 'a1', 'a2']);
  roundRobin.claimed(due('t1', 'a3'));
  expect(ids(roundRobin.order(found))).toEqual(['a1', 'b1', 'a2', 'a3']);
});
