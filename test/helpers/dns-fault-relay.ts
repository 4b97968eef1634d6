/**
 * A small fault-injecting DNS relay for tests, put in front of a real server (Knot): UDP queries
 * are forwarded and answered as the server answers, except for the names a rule picks, whose
 * queries are dropped (timeout), answered SERVFAIL, answered with the server's answer cut short
 * (malformed) or with its answer records in reverse order. TCP connections are passed through.
 * Counts every UDP query per `name/type`, and the most queries forwarded and not yet answered at
 * once (what the server sees in flight), with answers held `delayMs` when set. Clients may send
 * from several sockets with the same query ids: each forwarded query gets an id of the relay's own.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';
import { freePort } from './knot.js';

export type Fault = 'drop' | 'servfail' | 'cut' | 'reverse';

export interface FaultRule {
  name: string;
  type?: 'A' | 'AAAA' | 'PTR';
  fault: Fault;
  /** Queries the rule applies to (then it is spent); default every query. */
  times?: number;
}

export interface FaultRelay {
  host: string;
  port: number;
  /** UDP queries seen per `name/type` (name lowercase). */
  counts: Map<string, number>;
  /** Client sockets (address:port) UDP queries came from. */
  clients: Set<string>;
  /** The most UDP queries forwarded and not yet answered at once, since the start or the last reset. */
  maxInFlight(): number;
  /** Holds every answer this long before it goes back (0: none); resets maxInFlight. */
  setDelay(ms: number): void;
  setRules(rules: FaultRule[]): void;
  stop(): Promise<void>;
}

export async function startFaultRelay(
  upstream: { host: string; port: number },
  rules: FaultRule[],
): Promise<FaultRelay> {
  let active = rules.map((r) => ({ ...r, left: r.times ?? Infinity }));
  const counts = new Map<string, number>();
  const clients = new Set<string>();
  const host = '127.0.0.1';
  const port = await freePort();
  const front = dgram.createSocket('udp4');
  const back = dgram.createSocket('udp4');
  /** The relay's upstream id → client, its own id and the fault to apply to the answer. */
  const waiting = new Map<number, { address: string; port: number; id: number; fault: Fault | null }>();
  let nextUpstreamId = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let delayMs = 0;
  front.on('message', (msg, rinfo) => {
    let query: dnsPacket.DecodedPacket;
    try {
      query = dnsPacket.decode(msg);
    } catch {
      return;
    }
    const q = query.questions?.[0];
    if (!q) return;
    clients.add(`${rinfo.address}:${rinfo.port}`);
    const key = `${q.name.toLowerCase()}/${q.type}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    const rule = active.find(
      (r) => r.left > 0 && r.name === q.name.toLowerCase() && (!r.type || r.type === q.type),
    );
    if (rule) rule.left--;
    const fault = rule?.fault ?? null;
    if (fault === 'drop') return;
    if (fault === 'servfail') {
      const answer = dnsPacket.encode({
        type: 'response',
        id: query.id,
        flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | 2,
        questions: query.questions,
      });
      front.send(answer, rinfo.port, rinfo.address);
      return;
    }
    let upstreamId = nextUpstreamId;
    while (waiting.has(upstreamId)) upstreamId = (upstreamId + 1) & 0xffff;
    nextUpstreamId = (upstreamId + 1) & 0xffff;
    waiting.set(upstreamId, { address: rinfo.address, port: rinfo.port, id: query.id!, fault });
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const forwarded = Buffer.from(msg);
    forwarded.writeUInt16BE(upstreamId, 0);
    back.send(forwarded, upstream.port, upstream.host);
  });
  back.on('message', (msg) => {
    const id = msg.readUInt16BE(0);
    const client = waiting.get(id);
    if (!client) return;
    waiting.delete(id);
    let out: Uint8Array = msg;
    if (client.fault === 'cut') {
      // Header and question intact, the answer section cut in the middle of its first record.
      const packet = dnsPacket.decode(msg);
      const questionEnd = dnsPacket.encodingLength({ questions: packet.questions });
      out = msg.subarray(0, questionEnd + 5);
    } else if (client.fault === 'reverse') {
      const packet = dnsPacket.decode(msg);
      out = dnsPacket.encode({
        ...packet,
        answers: [...(packet.answers ?? [])].reverse(),
      } as dnsPacket.Packet);
    }
    const answer = Buffer.from(out);
    answer.writeUInt16BE(client.id, 0);
    const reply = () => {
      inFlight--;
      front.send(answer, client.port, client.address);
    };
    if (delayMs > 0) setTimeout(reply, delayMs);
    else reply();
  });
  await new Promise<void>((resolve) => front.bind(port, host, resolve));
  await new Promise<void>((resolve) => back.bind(0, host, resolve));
  const tcp = net.createServer((socket) => {
    const up = net.connect(upstream.port, upstream.host);
    socket.pipe(up).pipe(socket);
    socket.on('error', () => up.destroy());
    up.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => tcp.listen(port, host, resolve));
  return {
    host,
    port,
    counts,
    clients,
    maxInFlight: () => maxInFlight,
    setDelay(ms) {
      delayMs = ms;
      maxInFlight = inFlight;
    },
    setRules(next) {
      active = next.map((r) => ({ ...r, left: r.times ?? Infinity }));
    },
    async stop() {
      front.close();
      back.close();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}
