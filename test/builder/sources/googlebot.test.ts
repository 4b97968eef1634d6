import t from 'tap';
import { source as googlebot } from '../../../builder/sources/googlebot.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

t.test('Googlebot (common crawlers)', async (t) => {
  const text = fixture('googlebot', 'googlebot.json');
  const result = googlebot.parse(text, 'googlebot.json');
  t.equal(result.read, 7);
  t.equal(result.records.length, 7);
  t.strictSame(result.rejected, []);
  t.equal(result.publishedAt, '2026-08-21T14:45:42Z');
  t.strictSame(result.records[0], {
    prefix: '2001:4860:4801:10::/64',
    provider: 'Google',
    category: 'crawler',
    metadata: { operator: 'Google', bot: 'Googlebot' },
  });
  t.strictSame(result.records[3], {
    prefix: '192.178.4.0/27',
    provider: 'Google',
    category: 'crawler',
    metadata: { operator: 'Google', bot: 'Googlebot' },
  });
  const broken = googlebot.parse(
    breakText(text, '"192.178.4.128/27"', '"192.178.4.128/27/"'),
    'googlebot.json',
  );
  t.strictSame(broken.rejected, [
    { line: 17, reason: 'expected an IPv4 CIDR (address/length) in ipv4Prefix, got "192.178.4.128/27/"' },
  ]);
});
