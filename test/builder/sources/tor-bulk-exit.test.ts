import t from 'tap';
import { source } from '../../../builder/sources/tor-bulk-exit.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const text = fixture('tor-bulk-exit', 'torbulkexitlist');

t.test('excerpt: one /32 per address', async (t) => {
  const result = source.parse(text, 'torbulkexitlist');
  t.equal(result.read, 12);
  t.equal(result.records.length, 12);
  t.strictSame(result.rejected, []);
  t.equal(result.publishedAt, undefined);
  t.strictSame(result.records[0], {
    prefix: '93.95.230.253/32',
    provider: 'Tor Project',
    category: 'tor_exit',
    metadata: { kind: 'exit_observed' },
  });
  t.equal(result.records[11]?.prefix, '89.187.143.31/32');
});

t.test('an address listed twice is read twice, kept once', async (t) => {
  const result = source.parse(`${text}93.95.230.253\n`, 'torbulkexitlist');
  t.equal(result.read, 13);
  t.equal(result.records.length, 12);
  t.strictSame(result.rejected, []);
});

t.test('a broken copy', async (t) => {
  const broken = breakText(text, '185.244.195.103', '185.244.195.0/24'); // line 3
  const result = source.parse(broken, 'torbulkexitlist');
  t.strictSame(result.rejected, [
    {
      line: 3,
      reason: 'expected an IPv4 or IPv6 address in the line (one address per line), got "185.244.195.0/24"',
    },
  ]);
});
