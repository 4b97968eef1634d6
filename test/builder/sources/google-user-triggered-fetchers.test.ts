import t from 'tap';
import { source } from '../../../builder/sources/google-user-triggered-fetchers.js';
import { fixture } from '../../helpers/feed-fixture.js';

t.test('Google user-triggered fetchers', async (t) => {
  const text = fixture('google-user-triggered-fetchers', 'user-triggered-fetchers.json');
  const result = source.parse(text, 'user-triggered-fetchers.json');
  t.equal(result.read, 7);
  t.equal(result.records.length, 7);
  t.strictSame(result.rejected, []);
  t.equal(result.publishedAt, '2026-08-21T14:45:40Z');
  t.strictSame(result.records[6], {
    prefix: '107.178.192.192/27',
    provider: 'Google',
    category: 'crawler',
    metadata: { operator: 'Google', bot: 'Google user-triggered fetcher' },
  });
  t.throws(() => source.parse(text.slice(0, 200), 'user-triggered-fetchers.json'), {
    message:
      /^user-triggered-fetchers\.json: expected Google crawler ranges \(user-triggered-fetchers\.json\) \(JSON\), but it is not valid JSON/,
  });
});
