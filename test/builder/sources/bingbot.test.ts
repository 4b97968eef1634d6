import t from 'tap';
import { source } from '../../../builder/sources/bingbot.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const bing = (prefix: string) => ({
  prefix,
  provider: 'Microsoft',
  category: 'crawler',
  metadata: { operator: 'Microsoft', bot: 'Bingbot' },
});

t.test('plain CIDR list (derived from bingbot.json)', async (t) => {
  const result = source.parse(fixture('bingbot', 'bingbot-ipv4-cidrs.txt'), 'bingbot-ipv4-cidrs.txt');
  t.equal(result.read, 28);
  t.equal(result.records.length, 28);
  t.strictSame(result.rejected, []);
  t.equal(result.publishedAt, undefined);
  t.strictSame(result.records[0], bing('13.66.139.0/24'));
  t.strictSame(result.records[27], bing('207.46.13.0/24'));
});

t.test("Bing's bingbot.json", async (t) => {
  const text = fixture('bingbot', 'bingbot.json');
  const result = source.parse(text, 'bingbot.json');
  t.equal(result.read, 6);
  t.strictSame(result.rejected, []);
  t.equal(result.publishedAt, '2024-01-03T10:00:00Z');
  t.strictSame(result.records[2], bing('13.67.10.16/28'));
  const broken = source.parse(breakText(text, '"13.69.66.240/28"', '"13.69.66.240/28x"'), 'bingbot.json');
  t.strictSame(broken.rejected, [
    { line: 14, reason: 'expected an IPv4 CIDR (address/length) in ipv4Prefix, got "13.69.66.240/28x"' },
  ]);
});
