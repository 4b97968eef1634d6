import t from 'tap';
import { source } from '../../../builder/sources/cloudflare.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const v4 = fixture('cloudflare', 'ips-v4.txt');
const v6 = fixture('cloudflare', 'ips-v6.txt');

t.test('both lists, last line without a newline', async (t) => {
  t.notOk(v4.endsWith('\n'), 'fixture keeps the missing final newline');
  const result4 = source.parse(v4, 'ips-v4');
  t.equal(result4.read, 15);
  t.equal(result4.records.length, 15);
  t.strictSame(result4.rejected, []);
  t.strictSame(result4.records[0], {
    prefix: '173.245.48.0/20',
    provider: 'Cloudflare',
    category: 'cdn',
    metadata: {},
  });
  t.equal(result4.records[14]?.prefix, '131.0.72.0/22', 'the unterminated last line is read');
  const result6 = source.parse(v6, 'ips-v6');
  t.equal(result6.records.length, 7);
  t.strictSame(result6.records[6], {
    prefix: '2c0f:f248::/32',
    provider: 'Cloudflare',
    category: 'cdn',
    metadata: {},
  });
  t.equal(result6.publishedAt, undefined);
});

t.test('a broken copy', async (t) => {
  let broken = breakText(v4, '103.21.244.0/22', '103.21.244.0/22,extra'); // line 2
  broken = breakText(broken, '141.101.64.0/18', '141.101.64.0'); // line 5
  const result = source.parse(broken, 'ips-v4');
  t.equal(result.read, 15);
  t.strictSame(result.rejected, [
    {
      line: 2,
      reason: 'expected a CIDR (address/length) in the line (one CIDR per line), got "103.21.244.0/22,extra"',
    },
    {
      line: 5,
      reason:
        'expected a CIDR (address/length) in the line (one CIDR per line), got an address without /length "141.101.64.0"',
    },
  ]);
});
