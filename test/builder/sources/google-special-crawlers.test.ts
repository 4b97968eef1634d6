import t from 'tap';
import { source } from '../../../builder/sources/google-special-crawlers.js';
import { fixture } from '../../helpers/feed-fixture.js';

t.test('Google special-case crawlers', async (t) => {
  const result = source.parse(
    fixture('google-special-crawlers', 'special-crawlers.json'),
    'special-crawlers.json',
  );
  t.equal(result.read, 7);
  t.equal(result.records.length, 7);
  t.strictSame(result.rejected, []);
  t.equal(result.publishedAt, '2026-08-21T14:46:19Z');
  t.strictSame(result.records[1], {
    prefix: '2001:4860:4801:200c::/64',
    provider: 'Google',
    category: 'crawler',
    metadata: { operator: 'Google', bot: 'Google special-case crawler' },
  });
  t.equal(result.records[3]?.prefix, '108.177.2.0/27');
});
