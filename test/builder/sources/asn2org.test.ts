import t from 'tap';
import { source } from '../../../builder/sources/asn2org.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const text = fixture('asn2org', 'asns.csv');

t.test('excerpt: header skipped, quotes undone, source column dropped', async (t) => {
  const result = source.parse(text, 'asns.csv');
  t.equal(result.read, 12);
  t.equal(result.records.length, 12);
  t.strictSame(result.rejected, []);
  t.strictSame(result.records[0], { asn: 1, name: 'Level 3 Communications' });
  t.strictSame(result.records[5], { asn: 553, name: 'BelWü' });
  t.strictSame(result.records[6], { asn: 2148, name: 'National Research Center "Kurchatov Institute"' });
  t.strictSame(result.records[7], { asn: 13335, name: 'Cloudflare' });
  t.strictSame(result.records[11], { asn: 402737, name: 'AS-BOXCLOUD-01' });
});

t.test('a broken copy', async (t) => {
  let broken = breakText(text, '2,"University of Delaware","DB-IP"', '2,"University of Delaware"'); // line 3
  broken = breakText(broken, '5,"WFA Group"', 'five,"WFA Group"'); // line 6
  broken = breakText(broken, '"Cloudflare"', '" "'); // line 9
  broken = breakText(broken, '"Google","PeeringDB"', '"Google,"PeeringDB"'); // line 10
  const result = source.parse(broken, 'asns.csv');
  t.equal(result.read, 12);
  t.strictSame(result.rejected, [
    {
      line: 3,
      reason: 'expected 3 CSV columns ("asn","name","source"), got 2: "2,\\"University of Delaware\\""',
    },
    { line: 6, reason: 'expected an AS number (1 to 4294967295) in column 1, got "five"' },
    { line: 9, reason: 'expected a non-empty AS name in column 2 for AS13335' },
    {
      line: 10,
      reason:
        'expected 3 CSV columns ("asn","name","source"), got unbalanced quotes: "15169,\\"Google,\\"PeeringDB\\""',
    },
  ]);
});
