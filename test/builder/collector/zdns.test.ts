/** ZDNS 2 output through `import observations --format zdns`, and the resolver/PTR name helpers. */
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { openTempState } from '../../helpers/temp-state.js';
import { importZdnsFiles, parseZdnsLine } from '../../../builder/collector/zdns.js';
import dnsPacket from 'dns-packet';
import { encodeQuery, parseResolver } from '../../../builder/collector/dns-client.js';
import { reverseName } from '../../../builder/collector/ptr.js';

const answer = (name: string, type: string, value: string, ttl = 300) => ({
  answer: value,
  class: 'IN',
  name,
  ttl,
  type,
});
const line = (name: string, results: Record<string, unknown>) => JSON.stringify({ name, results });
const result = (status: string, timestamp: string, answers?: unknown[]) => ({
  data: { ...(answers ? { answers } : {}), protocol: 'udp', resolver: '127.0.0.53:53' },
  duration: 0.01,
  status,
  timestamp,
});

const LINES = [
  line('censys.io', {
    A: result('NOERROR', '2026-10-01T00:00:05-04:00', [
      answer('censys.io', 'A', '104.18.11.85'),
      answer('censys.io', 'A', '104.18.10.85'),
    ]),
  }),
  // MULTIPLE with A and AAAA; the chain goes through two CNAMEs (trailing dots, mixed case).
  line('WWW.Example.com', {
    A: result('NOERROR', '2026-10-01T04:00:06Z', [
      answer('www.example.com', 'CNAME', 'www.example.com-v4.edgesuite.net.'),
      answer('www.example.com-v4.edgesuite.net', 'CNAME', 'a1422.dscr.akamai.net.'),
      answer('a1422.dscr.akamai.net', 'A', '23.215.0.136'),
    ]),
    AAAA: result('NOERROR', '2026-10-01T04:00:06Z', [
      answer('www.example.com', 'CNAME', 'www.example.com-v4.edgesuite.net.'),
      answer('www.example.com-v4.edgesuite.net', 'CNAME', 'a1422.dscr.akamai.net.'),
      answer('a1422.dscr.akamai.net', 'AAAA', '2600:1406:3a00:21:0:0:173e:2e65'),
    ]),
  }),
  line('nothere.example', { A: result('NXDOMAIN', '2026-10-01T04:00:07Z', []) }),
  line('noaaaa.example', { AAAA: result('NOERROR', '2026-10-01T04:00:07Z', []) }),
  line('slow.example', { A: result('TIMEOUT', '2026-10-01T04:00:08Z') }),
  line('refused.example', { A: result('REFUSED', '2026-10-01T04:00:08Z') }),
  line('bad_input', { A: result('ILLEGAL_INPUT', '2026-10-01T04:00:09Z') }),
  line('mx.example', { MX: result('NOERROR', '2026-10-01T04:00:09Z', []) }),
  JSON.stringify({ name: 'v1.example', status: 'NOERROR', timestamp: '2026-10-01T04:00:09Z', data: {} }),
];

t.test('ZDNS lines become observations with the collector outcomes', async (t) => {
  t.same(parseZdnsLine(LINES[0]!), {
    ok: true,
    records: [
      {
        name: 'censys.io',
        type: 'A',
        time: 1790827205,
        outcome: 'positive',
        values: ['104.18.10.85', '104.18.11.85'],
        cnames: [],
      },
    ],
  });
  const chain = ['www.example.com-v4.edgesuite.net', 'a1422.dscr.akamai.net'];
  t.same(parseZdnsLine(LINES[1]!), {
    ok: true,
    records: [
      {
        name: 'www.example.com',
        type: 'A',
        time: 1790827206,
        outcome: 'positive',
        values: ['23.215.0.136'],
        cnames: chain,
      },
      {
        name: 'www.example.com',
        type: 'AAAA',
        time: 1790827206,
        outcome: 'positive',
        values: ['2600:1406:3a00:21::173e:2e65'],
        cnames: chain,
      },
    ],
  });
  const outcome = (i: number) => {
    const r = parseZdnsLine(LINES[i]!);
    return r.ok ? r.records.map((x) => `${x.type} ${x.outcome}`) : r.reason;
  };
  t.same(outcome(2), ['A nxdomain']);
  t.same(outcome(3), ['AAAA nodata']);
  t.same(outcome(4), ['A timeout']);
  t.same(outcome(5), ['A servfail']);
  t.equal(outcome(6), 'A: status "ILLEGAL_INPUT" is not a DNS answer');
  t.same(outcome(7), [], 'modules other than A and AAAA are ignored');
  t.match(outcome(8), /expected "results" with one entry per module/);

  const { dir, db } = openTempState(t, 'zdns-');
  const file = path.join(dir, 'zdns.json');
  fs.writeFileSync(file, `${LINES.join('\n')}\n`);
  const [summary] = await importZdnsFiles(db, [file]);
  t.same([summary!.read, summary!.rejectedCount, summary!.written], [9, 2, 7]);
  t.same(
    summary!.rejected.map((r) => r.line),
    [7, 9],
  );
  t.same(
    db
      .prepare(
        `SELECT n.name, s.rtype, s.outcome, s.vals, s.cnames FROM dns_state s JOIN dns_name n ON n.id = s.name_id ORDER BY n.name, s.rtype`,
      )
      .all(),
    [
      {
        name: 'censys.io',
        rtype: 'A',
        outcome: 'positive',
        vals: '["104.18.10.85","104.18.11.85"]',
        cnames: '[]',
      },
      { name: 'noaaaa.example', rtype: 'AAAA', outcome: 'nodata', vals: '[]', cnames: '[]' },
      { name: 'nothere.example', rtype: 'A', outcome: 'nxdomain', vals: '[]', cnames: '[]' },
      { name: 'refused.example', rtype: 'A', outcome: 'servfail', vals: '[]', cnames: '[]' },
      { name: 'slow.example', rtype: 'A', outcome: 'timeout', vals: '[]', cnames: '[]' },
      {
        name: 'www.example.com',
        rtype: 'A',
        outcome: 'positive',
        vals: '["23.215.0.136"]',
        cnames: JSON.stringify(chain),
      },
      {
        name: 'www.example.com',
        rtype: 'AAAA',
        outcome: 'positive',
        vals: '["2600:1406:3a00:21::173e:2e65"]',
        cnames: JSON.stringify(chain),
      },
    ],
  );
  // The same file again changes nothing.
  const [again] = await importZdnsFiles(db, [file]);
  t.equal(again!.counts!.skipped, 7);
});

t.test('resolver addresses and PTR names', async (t) => {
  t.same(parseResolver('127.0.0.1:5353'), { host: '127.0.0.1', port: 5353 });
  t.same(parseResolver('9.9.9.9'), { host: '9.9.9.9', port: 53 });
  t.same(parseResolver('[2001:db8::53]:853'), { host: '2001:db8::53', port: 853 });
  t.same(parseResolver('2001:db8::53'), { host: '2001:db8::53', port: 53 });
  t.throws(() => parseResolver('dns.example:53'), /expected an IP address and port/);
  t.throws(() => parseResolver('127.0.0.1:0'), /port must be 1 to 65535/);
  t.equal(reverseName('192.0.2.1'), '1.2.0.192.in-addr.arpa');
  t.equal(
    reverseName('2001:db8::1'),
    '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa',
  );
});

t.test('queries are encoded as dns-packet encodes them', async (t) => {
  for (const [name, type] of [
    ['www.example.com', 'A'],
    ['1.2.0.192.in-addr.arpa', 'PTR'],
    ['xn--bcher-kva.example', 'AAAA'],
  ] as const) {
    for (const size of [0, 1232]) {
      const expected = dnsPacket.encode({
        type: 'query',
        id: 4660,
        flags: dnsPacket.RECURSION_DESIRED,
        questions: [{ type, name, class: 'IN' }],
        ...(size > 0
          ? { additionals: [{ type: 'OPT', name: '.', udpPayloadSize: size } as dnsPacket.Answer] }
          : {}),
      });
      t.same(encodeQuery(4660, name, type, size), expected, `${name} ${type} ${size}`);
    }
  }
});
