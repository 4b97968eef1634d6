import t from 'tap';
import { source } from '../../../builder/sources/tor-exit-addresses.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const text = fixture('tor-exit-addresses', 'exit-addresses');
const exit = (address: string, seenAt: string) => ({
  prefix: `${address}/32`,
  provider: 'Tor Project',
  category: 'tor_exit',
  metadata: { kind: 'exit_observed' },
  seenAt,
});

t.test('excerpt: one /32 per ExitAddress, an address listed twice is kept once', async (t) => {
  const result = source.parse(text, 'exit-addresses');
  t.equal(result.read, 6, 'six ExitAddress lines');
  t.strictSame(result.rejected, []);
  t.equal(result.publishedAt, '2013-08-19T04:02:03Z', 'from the Downloaded header');
  // Each dated by its ExitAddress line; 109.163.233.194 (lines 14 and 23) by the later one.
  t.strictSame(result.records, [
    exit('66.223.170.168', '2013-08-19T03:18:51Z'),
    exit('82.252.181.155', '2013-08-18T08:03:01Z'),
    exit('109.163.233.194', '2013-08-19T00:19:10Z'),
    exit('173.245.67.161', '2013-08-18T23:19:19Z'),
    exit('173.245.67.63', '2013-08-19T02:19:20Z'),
  ]);
  t.equal(result.read - result.records.length - result.rejected.length, 1, 'one repeat (109.163.233.194)');
});

t.test('the live format without the @type/Downloaded header, and IPv6 exits', async (t) => {
  const body = text.split('\n').slice(2).join('\n');
  const result = source.parse(breakText(body, 'ExitAddress 82.252.181.155', 'ExitAddress 2001:DB8::1'), 'x');
  t.equal(result.publishedAt, undefined);
  t.strictSame(result.records[1], {
    prefix: '2001:db8::1/128',
    provider: 'Tor Project',
    category: 'tor_exit',
    metadata: { kind: 'exit_observed' },
    seenAt: '2013-08-18T08:03:01Z',
  });
});

t.test('the ExitAddress time: optional, but a bad one is a rejected row', async (t) => {
  const undated = source.parse(
    breakText(text, 'ExitAddress 82.252.181.155 2013-08-18 08:03:01', 'ExitAddress 82.252.181.155'),
    'x',
  );
  t.strictSame(undated.records[1], {
    prefix: '82.252.181.155/32',
    provider: 'Tor Project',
    category: 'tor_exit',
    metadata: { kind: 'exit_observed' },
  });
  t.equal(undated.records[1]!.seenAt, undefined, 'no time: dated by the list (Downloaded) on import');
  const bad = source.parse(
    breakText(text, 'ExitAddress 82.252.181.155 2013-08-18 08:03:01', 'ExitAddress 82.252.181.155 yesterday'),
    'x',
  );
  t.strictSame(bad.rejected, [
    {
      line: 10,
      reason:
        'expected "ExitAddress <address> <YYYY-MM-DD HH:MM:SS>", got "ExitAddress 82.252.181.155 yesterday"',
    },
  ]);
});

t.test('a broken copy', async (t) => {
  let broken = breakText(text, 'ExitAddress 82.252.181.155', 'ExitAddress 82.252.181.'); // line 10
  broken = breakText(broken, 'LastStatus 2013-08-19 02:02:41', 'LastSeen 2013-08-19 02:02:41'); // line 17
  const result = source.parse(broken, 'exit-addresses');
  t.equal(result.read, 7);
  t.strictSame(result.rejected, [
    { line: 10, reason: 'expected an IPv4 or IPv6 address in ExitAddress, got "82.252.181."' },
    {
      line: 17,
      reason:
        'expected a line starting with ExitNode, Published, LastStatus or ExitAddress, got "LastSeen 2013-08-19 02:02:41"',
    },
  ]);
});

t.test('a file in another format is refused, pointing to the right source', async (t) => {
  t.throws(() => source.parse(fixture('tor-bulk-exit', 'torbulkexitlist'), 'torbulkexitlist'), {
    message:
      'torbulkexitlist: expected a TorDNSEL exit list (ExitNode / ExitAddress lines), found none; for one address per line use the tor-bulk-exit source',
  });
});
