/**
 * HTTP over a bare TCP socket (node:net), for what no HTTP client will send: broken framing,
 * control characters in headers, a body that never finishes, a connection that stays silent.
 */
import net from 'node:net';

export interface SocketResponse {
  status: number;
  headers: Headers;
  text: string;
}

/** A connection to the service the test writes bytes to and reads whole responses from. */
export class RawConnection {
  private received = Buffer.alloc(0);
  private waiting?: () => void;
  /** When the server closed the connection, in ms after it opened; undefined while open. */
  closedAfterMs?: number;
  private readonly openedAt = Date.now();

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.waiting?.();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      this.closedAfterMs = Date.now() - this.openedAt;
      this.waiting?.();
    });
  }

  /** `localAddress`: the address to connect from (127.0.0.2 is a second loopback client). */
  static async open(baseUrl: string, localAddress?: string): Promise<RawConnection> {
    const { hostname, port } = new URL(baseUrl);
    const socket = net.connect({ port: Number(port), host: hostname, localAddress });
    await new Promise<void>((resolve, reject) =>
      socket.once('connect', resolve).once('error', reject),
    );
    return new RawConnection(socket);
  }

  write(bytes: string | Buffer): void {
    this.socket.write(bytes);
  }

  /** The next whole response (its body framed by Content-Length), or undefined if the connection closes first. */
  async response(timeoutMs = 10_000): Promise<SocketResponse | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = this.takeResponse();
      if (parsed) return parsed;
      if (this.closedAfterMs !== undefined) return undefined;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no response within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiting = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Resolves once the server has closed the connection, with the ms it stayed open. */
  async closed(timeoutMs = 10_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (this.closedAfterMs === undefined) {
      if (Date.now() > deadline) throw new Error(`still open after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.closedAfterMs;
  }

  destroy(): void {
    this.socket.destroy();
  }

  private takeResponse(): SocketResponse | undefined {
    const end = this.received.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const [statusLine, ...lines] = this.received.subarray(0, end).toString('latin1').split('\r\n');
    const headers = new Headers();
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    }
    const length = Number(headers.get('content-length') ?? 0);
    if (this.received.length < end + 4 + length) return undefined;
    const text = this.received.subarray(end + 4, end + 4 + length).toString('utf8');
    this.received = this.received.subarray(end + 4 + length);
    return { status: Number(statusLine.split(' ')[1]), headers, text };
  }
}

/** Sends the bytes on a new connection and reads one response. */
export async function rawRequest(
  baseUrl: string,
  bytes: string | Buffer,
): Promise<SocketResponse & { connection: RawConnection }> {
  const connection = await RawConnection.open(baseUrl);
  connection.write(bytes);
  const response = await connection.response();
  if (!response) throw new Error('the connection closed without a response');
  return { ...response, connection };
}
