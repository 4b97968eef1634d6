import t from 'tap';
import { source } from '../../../builder/sources/tor-exit-addresses.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const text = fixture('tor-exit-addresses', 'exit-addresses');
const exit = (address: string) => ({
  prefix: `${address}/32`,
  provider: 'Tor Project',
  category: 'tor_exit',
  metadata: { kind: 'exit_observed' },
});

t.test('excerpt: one /32 per ExitAddress, an address listed twice is kept once', async (t) => {
  const result = source.parse(text, 'exit-addresses');
  t.equal(result.read, 6, 'six ExitAddress lines');
  t.strictSame(result.rejected, []);
  t.equal(result.publishedAt, '2013-08-19T04:02:03Z', 'from the Downloaded header');
  t.strictSame(result.records, [
    exit('66.223.170.168'),
    exit('82.252.181.155'),
    exit('109.163.233.194'),
    exit('173.245.67.161'),
    exit('173.245.67.63'),
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
  });
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
