import t from 'tap';
import { source } from '../../../builder/sources/iptoasn.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const v6 = fixture('iptoasn', 'ip2asn-v6.tsv');
const v4 = fixture('iptoasn', 'ip2asn-v4.tsv');

t.test('IPv6 excerpt: every row read, ASN 0 and Unknown mapped to null', async (t) => {
  const result = source.parse(v6, 'ip2asn-v6.tsv');
  t.equal(result.read, 18);
  t.equal(result.records.length, 18);
  t.strictSame(result.rejected, []);
  t.equal(result.publishedAt, undefined, 'the TSV carries no timestamp');
  t.strictSame(result.records[0], { first: '::', last: '::1', asn: 0, country: null, descr: null });
  t.strictSame(result.records[3], {
    first: '200:1900:5203::',
    last: '200:1900:5203:ff:ffff:ffff:ffff:ffff',
    asn: 3356,
    country: 'US',
    descr: 'LEVEL3',
  });
  t.strictSame(result.records[8], {
    first: '2001:480:50::',
    last: '2001:480:50:ffff:ffff:ffff:ffff:ffff',
    asn: 6043,
    country: null,
    descr: 'AS6043',
  });
  t.strictSame(result.records[11], {
    first: '2400:9380:8001::',
    last: '2400:9380:8001:ffff:ffff:ffff:ffff:ffff',
    asn: 4134,
    country: 'CN',
    descr: 'CHINANET-BACKBONE No.31,Jin-rong Street',
  });
  t.strictSame(result.records[17], {
    first: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    last: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    asn: 0,
    country: null,
    descr: null,
  });
  t.equal(result.records.filter((record) => record.asn === 0).length, 9);
});

t.test('IPv4 excerpt', async (t) => {
  const result = source.parse(v4, 'ip2asn-v4.tsv');
  t.equal(result.read, 10);
  t.equal(result.records.length, 10);
  t.strictSame(result.records[0], {
    first: '1.1.1.0',
    last: '1.1.1.255',
    asn: 13335,
    country: 'US',
    descr: 'CLOUDFLARENET - Cloudflare, Inc.',
  });
  t.strictSame(result.records[9], {
    first: '216.252.221.0',
    last: '216.252.223.255',
    asn: 15169,
    country: 'US',
    descr: 'GOOGLE - Google LLC',
  });
});

t.test('addresses are written canonically (RFC 5952)', async (t) => {
  const text = breakText(v6, '2606:4700::\t', '2606:4700:0000:0000:0000:0000:0000:0000\t').replace(
    '2606:4700:1:ffff',
    '2606:4700:0001:FFFF',
  );
  const result = source.parse(text, 'ip2asn-v6.tsv');
  t.strictSame(result.rejected, []);
  t.equal(result.records[13]?.first, '2606:4700::');
  t.equal(result.records[13]?.last, '2606:4700:1:ffff:ffff:ffff:ffff:ffff');
});

t.test('a broken copy: bad rows are rejected with their line and what was expected', async (t) => {
  let text = breakText(v6, '\t3356\t', '\tAS-LEVEL3\t'); // line 4
  text = breakText(text, '2001:4:112::\t', '2001:4:112::\t\t'); // line 7: six columns
  text = breakText(text, '2001:480:50::\t', '2001:480:50:zz::\t'); // line 9
  text = breakText(text, '\tGOOGLE\n', '\tGOOGLE\textra\n'); // line 11
  text = breakText(text, '2606:4700:2::\t', '2606:4700:12::\t'); // line 15: start after end
  text = breakText(text, 'fec0::\t', '192.0.2.1\t'); // line 17: two families
  text = breakText(text, '\tCN\t', '\tChina\t'); // line 12
  const result = source.parse(text, 'ip2asn-v6.tsv');
  t.equal(result.read, 18);
  t.equal(result.records.length, 11);
  t.strictSame(result.rejected, [
    { line: 4, reason: 'expected an AS number (0 to 4294967295) in column 3, got "AS-LEVEL3"' },
    {
      line: 7,
      reason:
        'expected 5 TAB-separated columns (range_start, range_end, AS_number, country_code, AS_description), got 6',
    },
    { line: 9, reason: 'expected an IP address in column 1 (range start), got "2001:480:50:zz::"' },
    {
      line: 11,
      reason:
        'expected 5 TAB-separated columns (range_start, range_end, AS_number, country_code, AS_description), got 6',
    },
    { line: 12, reason: 'expected a two-letter country code, "None" or "Unknown" in column 4, got "China"' },
    {
      line: 15,
      reason:
        'expected range start <= range end, got "2606:4700:12::" > "2606:4700:11:ffff:ffff:ffff:ffff:ffff"',
    },
    {
      line: 17,
      reason:
        'expected range start and end of one address family, got IPv4 "192.0.2.1" and IPv6 "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe"',
    },
  ]);
  t.equal(result.records.length + result.rejected.length, result.read);
});

t.test('CRLF line endings and blank lines', async (t) => {
  const result = source.parse(`\n${v4.replace(/\n/g, '\r\n')}\r\n`, 'ip2asn-v4.tsv');
  t.equal(result.read, 10);
  t.strictSame(result.rejected, []);
  t.equal(result.records[9]?.descr, 'GOOGLE - Google LLC');
});
