/**
 * A real DNS server for tests, on UDP on loopback: it answers A and AAAA queries for the names it
 * is given, and for a name marked slow it never answers (or answers its first query only), as a
 * tenant's own name server may. The service is pointed at it with WEBHOOK_DNS_SERVERS; the
 * machine's resolver is left as it is.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';

export interface NameRecord {
  /** The name's addresses, IPv4 and IPv6 together; none means the name does not exist. */
  addresses: string[];
  ttl?: number;
  /** `never`: no query for it is answered; `once`: the first lookup is (its A and AAAA queries), then none. */
  silent?: 'never' | 'once';
  /** Answers this late. */
  delayMs?: number;
}

export interface NameServer {
  /** `127.0.0.1:port`, for WEBHOOK_DNS_SERVERS. */
  readonly address: string;
  /** Names and what the server says of them; changed at will by the test. */
  readonly names: Map<string, NameRecord>;
  /** Every query received, by name (lower case, no trailing dot). */
  readonly queries: Map<string, number>;
  /** The most names whose late answers were awaited at once. */
  readonly mostLateAtOnce: () => number;
  stop(): Promise<void>;
}

export async function startNameServer(names: Record<string, NameRecord> = {}): Promise<NameServer> {
  const socket = dgram.createSocket('udp4');
  const records = new Map(
    Object.entries(names).map(([name, record]) => [name.toLowerCase(), record]),
  );
  const queries = new Map<string, number>();
  const late = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  let mostLate = 0;
  socket.on('message', (message, from) => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    const asked = (queries.get(name) ?? 0) + 1;
    queries.set(name, asked);
    const record = records.get(name);
    if (record?.silent === 'never' || (record?.silent === 'once' && asked > 2)) return;
    const family = question.type === 'A' ? 4 : question.type === 'AAAA' ? 6 : 0;
    const answers = (record?.addresses ?? [])
      .filter((address) => net.isIP(address) === family)
      .map((address) => ({
        type: question.type as 'A' | 'AAAA',
        class: 'IN' as const,
        name: question.name,
        ttl: record?.ttl ?? 60,
        data: address,
      }));
    const reply = dnsPacket.encode({
      id: query.id,
      type: 'response',
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (record ? 0 : 3), // rcode 3: NXDOMAIN
      questions: query.questions,
      answers,
    });
    if (!record?.delayMs) return socket.send(reply, from.port, from.address);
    late.set(name, (late.get(name) ?? 0) + 1);
    mostLate = Math.max(mostLate, late.size);
    const timer = setTimeout(() => {
      timers.delete(timer);
      const left = late.get(name)! - 1;
      if (left === 0) late.delete(name);
      else late.set(name, left);
      socket.send(reply, from.port, from.address);
    }, record.delayMs);
    timers.add(timer);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    names: records,
    queries,
    mostLateAtOnce: () => mostLate,
    stop: () => {
      for (const timer of timers) clearTimeout(timer);
      return new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };
}
