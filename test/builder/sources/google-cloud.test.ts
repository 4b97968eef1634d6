import t from 'tap';
import { source } from '../../../builder/sources/google-cloud.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const text = fixture('google-cloud', 'cloud.json');

t.test('excerpt: region from scope, service as published', async (t) => {
  const result = source.parse(text, 'cloud.json');
  t.equal(result.read, 12);
  t.equal(result.records.length, 12);
  t.strictSame(result.rejected, []);
  t.equal(
    result.publishedAt,
    '2026-08-21T01:05:42Z',
    'creationTime 2026-08-21T01:05:42.583377, whole seconds',
  );
  t.strictSame(result.records[0], {
    prefix: '34.1.208.0/20',
    provider: 'Google Cloud',
    category: 'cloud',
    metadata: { region: 'africa-south1', service: 'Google Cloud' },
  });
  t.strictSame(result.records[6], {
    prefix: '2600:1900:8000::/44',
    provider: 'Google Cloud',
    category: 'cloud',
    metadata: { region: 'africa-south1', service: 'Google Cloud' },
  });
  t.strictSame(result.records[8]?.metadata, { region: 'us-east4', service: 'Google Cloud' });
  t.equal(result.records[11]?.prefix, '2600:1902:2d0::/44');
});

t.test('a broken copy: rejected prefixes carry their line', async (t) => {
  let broken = breakText(text, '"34.35.0.0/16"', '"34.35.0.0"'); // line 9
  broken = breakText(broken, '"ipv6Prefix": "2600:1902:10::/44"', '"ipv6Prefix": "34.0.0.0/8"'); // line 33
  const result = source.parse(broken, 'cloud.json');
  t.equal(result.read, 12);
  t.strictSame(result.rejected, [
    {
      line: 9,
      reason:
        'expected an IPv4 CIDR (address/length) in ipv4Prefix, got an address without /length "34.35.0.0"',
    },
    {
      line: 33,
      reason: 'expected an IPv6 CIDR (address/length) in ipv6Prefix, got an IPv4 CIDR "34.0.0.0/8"',
    },
  ]);
});

t.test('wrong shape is refused as a whole', async (t) => {
  t.throws(() => source.parse(breakText(text, '"ipv4Prefix": "34.1.208.0/20",', ''), 'cloud.json'), {
    message:
      'cloud.json: not in the Google Cloud cloud.json shape: prefixes.0: expected exactly one of ipv4Prefix, ipv6Prefix',
  });
  t.throws(() => source.parse('[]', 'cloud.json'), {
    message: /^cloud\.json: not in the Google Cloud cloud\.json shape: \(top level\): /,
  });
});
