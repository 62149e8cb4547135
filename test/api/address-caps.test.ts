/**
 * One client address cannot hold what all share: past MAX_CONNECTIONS_PER_ADDRESS its new
 * connections are closed while other addresses are served; behind a trusted proxy the proxy's
 * connections are not counted, and each forwarded client gets that many requests in progress.
 * 127.0.0.2 is a second client address on loopback.
 */
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
