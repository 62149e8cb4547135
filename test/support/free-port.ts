import net from 'node:net';

/** A port nothing listens on now, for a server the test starts itself. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A port nothing listens on now, below the range the system gives connections their own local
 * ports from (32768 and up on Linux): a server that binds it later, or again after a restart (a
 * Galera node's state-transfer ports), cannot find it taken by some connection meanwhile.
 */
export async function freeServerPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const server = net.createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) continue;
    await new Promise((resolve) => server.close(resolve));
    return port;
  }
}
