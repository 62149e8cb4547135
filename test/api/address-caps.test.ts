/**
 * One client address cannot hold what all share: past MAX_CONNECTIONS_PER_ADDRESS its new
 * connections are closed while other addresses are served; behind a trusted proxy the proxy's
 * connections are not counted, and each forwarded client gets that many requests in progress.
 * 127.0.0.2 is a second client address on loopback.
 */
import { addressKey } from '../../src/http/address-caps';
import { RawConnection } from '../support/raw-http';
import { startTestService, type TestService } from '../support/test-service';

const healthz = 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';

async function openIdle(
  service: TestService,
  count: number,
  from?: string,
): Promise<RawConnection[]> {
  return Promise.all(
    Array.from({ length: count }, () => RawConnection.open(service.baseUrl, from)),
  );
}

/** Whether a new connection from the address gets /healthz answered. */
async function served(service: TestService, from?: string): Promise<number | undefined> {
  const connection = await RawConnection.open(service.baseUrl, from);
  try {
    connection.write(healthz);
    return (await connection.response(5000))?.status;
  } finally {
    connection.destroy();
  }
}

it('closes a connection past the cap from one address, keeps serving another, and takes new ones as its own close', async () => {
  const api = await startTestService({ config: { maxConnectionsPerAddress: 5 } });
  const idle = await openIdle(api, 5);
  try {
    expect(await served(api)).toBeUndefined();
    expect(await served(api, '127.0.0.2')).toBe(200);
    // The idle ones are still held, not closed to make room.
    expect(idle.every((connection) => connection.closedAfterMs === undefined)).toBe(true);

    idle.pop()!.destroy();
    // The server learns of the close a moment later.
    const deadline = Date.now() + 5000;
    let status: number | undefined;
    while (status === undefined && Date.now() < deadline) status = await served(api);
    expect(status).toBe(200);
  } finally {
    for (const connection of idle) connection.destroy();
    await api.stop();
  }
});

it("behind a trusted proxy counts no proxy connection, and caps each forwarded client's requests in progress", async () => {
  const api = await startTestService({
    config: { maxConnectionsPerAddress: 2, trustProxy: ['loopback'] },
  });
  const idle = await openIdle(api, 4);
  try {
    expect(await served(api)).toBe(200);
    const key = await api.createKey('acme');
    const asClient = (address: string, query: string) =>
      api.send('GET', `/v1/events${query}`, { key, headers: { 'X-Forwarded-For': address } });
    const cursor = (await asClient('203.0.113.9', '')).json.next_cursor;
    const held = [
      asClient('203.0.113.9', `?cursor=${cursor}&wait=5`),
      asClient('203.0.113.9', `?cursor=${cursor}&wait=5`),
    ];
    // Both in progress: the third from the same client is refused until one answers.
    let third = await asClient('203.0.113.9', '');
    const deadline = Date.now() + 5000;
    while (third.status === 200 && Date.now() < deadline) third = await asClient('203.0.113.9', '');
    expect(third.status).toBe(429);
    expect(third.json.type).toBe('/problems/rate-limited');
    expect(third.headers.get('retry-after')).toBe('1');
    expect((await asClient('203.0.113.10', '')).status).toBe(200);
    expect((await Promise.all(held)).map((answer) => answer.status)).toEqual([200, 200]);
    expect((await asClient('203.0.113.9', '')).status).toBe(200);
  } finally {
    for (const connection of idle) connection.destroy();
    await api.stop();
  }
});

it("sheds half-open connections, the oldest first, so that many addresses' silent sockets never keep out a request", async () => {
  const api = await startTestService({
    config: { maxConnections: 40, maxConnectionsPerAddress: 10 },
  });
  const holders: RawConnection[] = [];
  try {
    // A request in progress on its own connection: a long poll that waits, never shed.
    const key = await api.createKey('shedding');
    const cursor = (await api.send('GET', '/v1/events', { key })).json.next_cursor;
    const polling = await RawConnection.open(api.baseUrl, '127.0.0.9');
    polling.write(
      `GET /v1/events?cursor=${cursor}&wait=5 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`,
    );
    // Six addresses, each within its own cap, together past MAX_CONNECTIONS, sending half a request and no more.
    for (let address = 2; address <= 7; address++)
      for (const connection of await openIdle(api, 10, `127.0.0.${address}`)) {
        connection.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
        holders.push(connection);
      }
    // Every request from another address is answered.
    const statuses: Array<number | undefined> = [];
    for (let i = 0; i < 20; i++) statuses.push(await served(api, '127.0.0.8'));
    expect(statuses).toEqual(Array(20).fill(200));
    // The holders shed were the oldest, and the instance never held more than its cap.
    const deadline = Date.now() + 5000;
    while (
      holders.filter((c) => c.closedAfterMs === undefined).length > 39 &&
      Date.now() < deadline
    )
      await new Promise((resolve) => setTimeout(resolve, 20));
    const open = holders.map((c) => c.closedAfterMs === undefined);
    expect(open.filter(Boolean).length).toBeLessThanOrEqual(39);
    expect(open.slice(0, 20).some(Boolean)).toBe(false);
    expect(open.slice(-10).every(Boolean)).toBe(true);
    // The long poll, a request in progress, was left alone and answers.
    expect((await polling.response(10_000))?.status).toBe(200);
  } finally {
    for (const connection of holders) connection.destroy();
    await api.stop();
  }
});

it('counts an IPv6 client by its /64, and an IPv4-mapped one as its IPv4 address', () => {
  expect(addressKey('2001:db8:1:2:aaaa::1')).toBe(addressKey('2001:db8:1:2:bbbb:cccc:dddd:eeee'));
  expect(addressKey('2001:db8:1:2::1')).not.toBe(addressKey('2001:db8:1:3::1'));
  expect(addressKey('::ffff:127.0.0.2')).toBe('127.0.0.2');
  expect(addressKey('127.0.0.2')).toBe('127.0.0.2');
});
