import { performance } from 'node:perf_hooks';
import t from 'tap';
import { source } from '../../../builder/sources/ip-location-db.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const v4 = fixture('ip-location-db', 'asn-ipv4.csv');
const v6 = fixture('ip-location-db', 'asn-ipv6.csv');

t.test('IPv4 excerpt: quoted organizations with commas and doubled quotes', async (t) => {
  const result = source.parse(v4, 'asn-ipv4.csv');
  t.equal(result.read, 17);
  t.equal(result.records.length, 17);
  t.strictSame(result.rejected, []);
  t.equal(result.publishedAt, undefined);
  t.strictSame(result.records[0], {
    first: '1.0.0.0',
    last: '1.0.0.255',
    asn: 13335,
    country: null,
    descr: 'Cloudflare, Inc.',
  });
  t.equal(result.records[3]?.descr, 'Enecom,Inc.');
  t.equal(result.records[8]?.descr, 'Yamu Technologies Co., Ltd.');
  t.strictSame(result.records[10], {
    first: '2.26.200.0',
    last: '2.26.215.255',
    asn: 201907,
    country: null,
    descr: 'LLC "SPUTNIK"',
  });
  t.strictSame(result.records[13], {
    first: '8.8.8.0',
    last: '8.8.8.255',
    asn: 15169,
    country: null,
    descr: 'Google LLC',
  });
  t.ok(
    result.records.every((record) => record.country === null),
    'the tables have no country',
  );
});

t.test('IPv6 excerpt: canonical text, one zero group is not compressed', async (t) => {
  const result = source.parse(v6, 'asn-ipv6.csv');
  t.equal(result.read, 13);
  t.equal(result.records.length, 13);
  t.strictSame(result.records[0], {
    first: '2001::',
    last: '2001:0:ffff:ffff:ffff:ffff:ffff:ffff',
    asn: 6939,
    country: null,
    descr: 'Hurricane Electric LLC',
  });
  // Published as 2001:218:4001::ffff:ffff:ffff:ffff; RFC 5952 writes a single zero group as 0.
  t.equal(result.records[11]?.last, '2001:218:4001:0:ffff:ffff:ffff:ffff');
  t.equal(result.records[10]?.descr, 'STARCLOUD GLOBAL PTE., LTD.');
});

t.test('a broken copy: rejected rows name the line and the expectation', async (t) => {
  let text = breakText(v4, '1.0.4.0,', '1.0.4,'); // line 2
  text = breakText(text, '"Enecom,Inc."', '"Enecom,Inc.'); // line 4: unclosed quote
  text = breakText(text, '1.1.1.255,13335,', '1.1.1.255,AS13335x,'); // line 8
  text = breakText(text, ',Google LLC', ',Google,LLC'); // line 14: 5 columns
  const result = source.parse(text, 'asn-ipv4.csv');
  t.equal(result.read, 17);
  t.equal(result.records.length, 13);
  t.strictSame(result.rejected, [
    { line: 2, reason: 'expected an IP address in column 1 (range start), got "1.0.4"' },
    {
      line: 4,
      reason: 'expected a CSV line with balanced quotes, got "1.0.64.0,1.0.127.255,18144,\\"Enecom,Inc."',
    },
    { line: 8, reason: 'expected an AS number (0 to 4294967295) in column 3, got "AS13335x"' },
    {
      line: 14,
      reason: 'expected 4 CSV columns (ip_range_start, ip_range_end, as_number, as_organization), got 5',
    },
  ]);
});

t.test('parses 400,000 rows well under 5 s', async (t) => {
  // The real asn-ipv4.csv has 411,961 rows; repeat the excerpt to that size.
  const lines = v4.trimEnd().split('\n');
  const rows: string[] = [];
  while (rows.length < 411_961) rows.push(...lines);
  const text = rows.slice(0, 411_961).join('\n');
  const started = performance.now();
  const result = source.parse(text, 'asn-ipv4.csv');
  const seconds = (performance.now() - started) / 1000;
  t.equal(result.records.length, 411_961);
  t.ok(seconds < 5, `parsed in ${seconds.toFixed(2)} s`);
});
