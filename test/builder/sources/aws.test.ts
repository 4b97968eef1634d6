import t from 'tap';
import { awsCategory, source } from '../../../builder/sources/aws.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const text = fixture('aws', 'ip-ranges.json');

t.test('excerpt: one record per (prefix, service), CloudFront is cdn', async (t) => {
  const result = source.parse(text, 'ip-ranges.json');
  t.equal(result.read, 15);
  t.equal(result.records.length, 12, 'three AMAZON entries repeat another service: read, not kept');
  t.strictSame(result.rejected, []);
  t.equal(result.publishedAt, '2026-08-22T15:17:05Z', 'from createDate 2026-08-22-15-17-05');
  t.strictSame(result.records[0], {
    prefix: '3.4.12.4/32',
    provider: 'AWS',
    category: 'cloud',
    metadata: { region: 'eu-west-1', service: 'AMAZON', network_border_group: 'eu-west-1' },
  });
  t.strictSame(
    result.records.filter((record) => record.prefix === '23.228.249.0/24'),
    [
      {
        prefix: '23.228.249.0/24',
        provider: 'AWS',
        category: 'cdn',
        metadata: { region: 'GLOBAL', service: 'CLOUDFRONT', network_border_group: 'GLOBAL' },
      },
    ],
    'the AMAZON repeat of a CLOUDFRONT prefix is dropped: the edge is cdn only',
  );
  t.strictSame(
    result.records.filter((record) => record.metadata.service === 'AMAZON').map((record) => record.prefix),
    ['3.4.12.4/32', '3.5.140.0/22', '15.190.244.0/22', '2406:daf9:a800::/40'],
    'AMAZON entries that no other service lists stay',
  );
  t.strictSame(
    result.records.find((record) => record.prefix === '130.176.88.0/21'),
    {
      prefix: '130.176.88.0/21',
      provider: 'AWS',
      category: 'cdn',
      metadata: { region: 'GLOBAL', service: 'CLOUDFRONT_ORIGIN_FACING', network_border_group: 'GLOBAL' },
    },
  );
  t.strictSame(result.records.find((record) => record.metadata.service === 'EC2')?.metadata, {
    region: 'us-east-1',
    service: 'EC2',
    network_border_group: 'us-east-1-iah-1',
  });
  t.strictSame(
    result.records.find((record) => record.prefix === '2600:9000:3000::/36'),
    {
      prefix: '2600:9000:3000::/36',
      provider: 'AWS',
      category: 'cdn',
      metadata: { region: 'GLOBAL', service: 'CLOUDFRONT', network_border_group: 'GLOBAL' },
    },
  );
  t.equal(result.records.filter((record) => record.category === 'cdn').length, 4);
  t.equal(result.records.filter((record) => record.category === 'cloud').length, 8);
});

t.test('category mapping', async (t) => {
  t.equal(awsCategory('CLOUDFRONT'), 'cdn');
  t.equal(awsCategory('CLOUDFRONT_ORIGIN_FACING'), 'cdn');
  t.equal(awsCategory('EC2'), 'cloud');
  t.equal(awsCategory('GLOBALACCELERATOR'), 'cloud');
});

t.test('a broken copy: bad prefixes rejected at their line, host bits normalised', async (t) => {
  let broken = breakText(text, '"3.5.140.0/22"', '"3.5.140.0/33"'); // line 12
  broken = breakText(broken, '"216.244.7.0/24"', '"216.244.7.9/24"'); // host bits set: kept
  broken = breakText(broken, '"2406:daf9:a800::/40"', '"10.0.0.0/8"'); // IPv4 under ipv6_prefix
  const result = source.parse(broken, 'ip-ranges.json');
  t.equal(result.read, 15);
  t.equal(result.records.length, 10, '15 read, 2 rejected, 3 AMAZON repeats');
  t.strictSame(result.rejected, [
    { line: 12, reason: 'expected an IPv4 CIDR (address/length) in ip_prefix, got "3.5.140.0/33"' },
    {
      line: 80,
      reason: 'expected an IPv6 CIDR (address/length) in ipv6_prefix, got an IPv4 CIDR "10.0.0.0/8"',
    },
  ]);
  t.ok(result.records.some((record) => record.prefix === '216.244.7.0/24'));
});

t.test('a file that is not ip-ranges.json is refused as a whole, naming the file', async (t) => {
  t.throws(() => source.parse('{"prefixes": [', 'ip-ranges.json'), {
    message: /^ip-ranges\.json: expected AWS ip-ranges\.json \(JSON\), but it is not valid JSON/,
  });
  t.throws(() => source.parse('{"prefixes": []}', 'ip-ranges.json'), {
    message: /^ip-ranges\.json: not in the AWS ip-ranges\.json shape: ipv6_prefixes: /,
  });
  t.throws(() => source.parse(breakText(text, '"service": "S3"', '"service": 3'), 'ip-ranges.json'), {
    message: /^ip-ranges\.json: not in the AWS ip-ranges\.json shape: prefixes\.5\.service: /,
  });
  t.throws(() => source.parse(breakText(text, '2026-08-22-15-17-05', 'yesterday'), 'ip-ranges.json'), {
    message:
      'ip-ranges.json: expected "createDate" to be a UTC timestamp like 2026-08-21T14:45:42, got "yesterday"',
  });
});
