/**
 * The fast answer reader (builder/collector/response.ts) against dns-packet's full decode: on every
 * message it accepts, the outcome, values and chain are those of the full decode; messages of
 * another shape (and every cut-short message) are left to the full decode.
 */
import t from 'tap';
import dnsPacket from 'dns-packet';
import { readAnswer } from '../../../builder/collector/answer.js';
import { encodeQuery } from '../../../builder/collector/dns-client.js';
import { formatIpv6, readSimpleResponse } from '../../../builder/collector/response.js';
import { canonicalIp } from '../../../shared/ip.js';

type Q = { name: string; type: 'A' | 'AAAA' | 'PTR' };

function full(msg: Buffer, q: Q): ReturnType<typeof readAnswer> | 'fallback' {
  let packet: dnsPacket.DecodedPacket;
  try {
    packet = dnsPacket.decode(msg);
  } catch {
    return 'fallback';
  }
  const rcode = (packet as { rcode?: string }).rcode ?? 'SERVFAIL';
  return readAnswer(rcode, packet.answers ?? [], q.name, q.type);
}

const opt = { type: 'OPT', name: '.', udpPayloadSize: 1232 } as dnsPacket.Answer;
const soa = {
  type: 'SOA',
  name: 'z1.bench',
  ttl: 300,
  data: {
    mname: 'ns.z1.bench',
    rname: 'hostmaster.z1.bench',
    serial: 7,
    refresh: 3600,
    retry: 600,
    expire: 86400,
    minimum: 300,
  },
} as dnsPacket.Answer;

const RCODES: Record<string, number> = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 };

function response(q: Q, extra: Partial<dnsPacket.Packet> & { rcode?: string; qname?: string }): Buffer {
  return dnsPacket.encode({
    type: 'response',
    id: 4660,
    flags:
      dnsPacket.RECURSION_DESIRED |
      dnsPacket.AUTHORITATIVE_ANSWER |
      (extra.flags ?? 0) |
      RCODES[extra.rcode ?? 'NOERROR']!,
    questions: [{ type: q.type, name: extra.qname ?? q.name, class: 'IN' }],
    answers: [],
    authorities: [],
    additionals: [opt],
    ...extra,
  } as dnsPacket.Packet);
}

const a = (name: string, data: string) => ({ type: 'A', name, ttl: 60, data }) as dnsPacket.Answer;
const aaaa = (name: string, data: string) => ({ type: 'AAAA', name, ttl: 60, data }) as dnsPacket.Answer;
const cname = (name: string, data: string) => ({ type: 'CNAME', name, ttl: 60, data }) as dnsPacket.Answer;

const CASES: Array<[string, Q, Buffer, boolean]> = [];
const add = (label: string, q: Q, msg: Buffer, simple: boolean) => CASES.push([label, q, msg, simple]);
{
  const qa: Q = { name: 'd1.z1.bench', type: 'A' };
  const q6: Q = { name: 'www.d1.z1.bench', type: 'AAAA' };
  add(
    'positive A',
    qa,
    response(qa, { answers: [a('d1.z1.bench', '192.0.2.1'), a('d1.z1.bench', '10.0.0.9')] }),
    true,
  );
  add(
    'positive AAAA through a chain',
    q6,
    response(q6, {
      answers: [
        cname('www.d1.z1.bench', 'cdn.z2.bench'),
        cname('cdn.z2.bench', 'edge.z3.bench'),
        aaaa('edge.z3.bench', '2001:db8::1'),
        aaaa('edge.z3.bench', '2001:0db8:0:0:1:0:0:0'),
      ],
    }),
    true,
  );
  add('nodata', qa, response(qa, { authorities: [soa] }), true);
  add(
    'nxdomain with chain',
    qa,
    response(qa, {
      rcode: 'NXDOMAIN',
      answers: [cname('d1.z1.bench', 'gone.z9.bench')],
      authorities: [soa],
    }),
    true,
  );
  add(
    'upper-case question',
    qa,
    response(qa, { qname: 'D1.Z1.Bench', answers: [a('D1.z1.BENCH', '192.0.2.1')] }),
    true,
  );
  add(
    'records of another name only',
    qa,
    response(qa, { answers: [a('other.z1.bench', '192.0.2.3')] }),
    true,
  );
  add('A record for an AAAA query', q6, response(q6, { answers: [a('www.d1.z1.bench', '192.0.2.3')] }), true);
  add(
    'CNAME loop',
    qa,
    response(qa, { answers: [cname('d1.z1.bench', 'x.z1.bench'), cname('x.z1.bench', 'd1.z1.bench')] }),
    true,
  );
  add('no EDNS', qa, response(qa, { answers: [a('d1.z1.bench', '192.0.2.1')], additionals: [] }), true);
  add(
    'NS in authority',
    qa,
    response(qa, {
      answers: [a('d1.z1.bench', '192.0.2.1')],
      authorities: [{ type: 'NS', name: 'z1.bench', ttl: 60, data: 'ns.z1.bench' } as dnsPacket.Answer],
    }),
    true,
  );
  add('SERVFAIL', qa, response(qa, { rcode: 'SERVFAIL' }), false);
  add('REFUSED', qa, response(qa, { rcode: 'REFUSED' }), false);
  add(
    'another question',
    qa,
    response(qa, { qname: 'd2.z1.bench', answers: [a('d2.z1.bench', '192.0.2.1')] }),
    false,
  );
  add('another type', qa, response({ ...qa, type: 'AAAA' }, {}), false);
  add(
    'TXT in the answer',
    qa,
    response(qa, { answers: [{ type: 'TXT', name: 'd1.z1.bench', ttl: 1, data: 'x' } as dnsPacket.Answer] }),
    false,
  );
  add('truncated', qa, response(qa, { flags: dnsPacket.TRUNCATED_RESPONSE }), false);
  add('a query, not a response', qa, encodeQuery(4660, qa.name, qa.type, 1232), false);
  const ptr: Q = { name: '1.2.0.192.in-addr.arpa', type: 'PTR' };
  add(
    'PTR',
    ptr,
    response(ptr, {
      answers: [{ type: 'PTR', name: ptr.name, ttl: 60, data: 'Host.Example.' } as dnsPacket.Answer],
    }),
    true,
  );
  // Every cut of a good answer: never read as a good answer by the fast path.
  const good = response(q6, {
    answers: [cname('www.d1.z1.bench', 'cdn.z2.bench'), aaaa('cdn.z2.bench', '2001:db8::5')],
    authorities: [soa],
  });
  for (let cut = 0; cut < good.length; cut++) add(`cut at ${cut}`, q6, good.subarray(0, cut), false);
}

t.test('the fast reader agrees with the full decode', async (t) => {
  for (const [label, q, msg, simple] of CASES) {
    const query = encodeQuery(4660, q.name, q.type, 1232);
    const fast = readSimpleResponse(msg, query);
    t.equal(fast !== null, simple, `${label}: ${simple ? 'read' : 'left to dns-packet'}`);
    if (fast === null) continue;
    t.same(readAnswer(fast.rcode, fast.records, q.name, q.type, true), full(msg, q), label);
  }
});

t.test('IPv6 addresses are formatted as canonicalIp formats them', async (t) => {
  const samples = [
    '::',
    '::1',
    '1::',
    '2001:db8::1',
    '2001:db8:0:0:1:0:0:1',
    '0:0:1:0:0:0:1:0',
    'ffff::ffff:0:0',
    '::ffff:102:304',
    '1:2:3:4:5:6:7:8',
    '1:0:2:3:4:5:6:7',
  ];
  for (let i = 0; i < 200; i++) {
    const groups = Array.from({ length: 8 }, () => (Math.random() < 0.5 ? 0 : (Math.random() * 65536) | 0));
    samples.push(groups.map((g) => g.toString(16)).join(':'));
  }
  for (const s of samples) {
    const bytes = dnsPacket.encode({
      type: 'response',
      id: 1,
      answers: [{ type: 'AAAA', name: 'x', ttl: 1, data: s }],
    } as dnsPacket.Packet);
    t.equal(formatIpv6(bytes, bytes.length - 16), canonicalIp(s), s);
  }
});
