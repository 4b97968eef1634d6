import t from 'tap';
import { source } from '../../../builder/sources/as-category.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const text = fixture('as-category', 'as-category.csv');

t.test('hand-written example: header, comment, blank line and AS prefix', async (t) => {
  const result = source.parse(text, 'as-category.csv');
  t.equal(result.read, 9);
  t.strictSame(result.rejected, []);
  t.strictSame(result.records, [
    { asn: 13335, category: 'cdn' },
    { asn: 15169, category: 'hosting' },
    { asn: 16509, category: 'hosting' },
    { asn: 20940, category: 'cdn' },
    { asn: 3320, category: 'isp' },
    { asn: 7922, category: 'isp' },
    { asn: 2914, category: 'isp' },
    { asn: 11537, category: 'education_research' },
    { asn: 714, category: 'business' },
  ]);
});

t.test('without a header', async (t) => {
  const result = source.parse('13335,cdn\r\nAS15169,hosting', 'x.csv');
  t.strictSame(result.records, [
    { asn: 13335, category: 'cdn' },
    { asn: 15169, category: 'hosting' },
  ]);
});

t.test('a broken copy', async (t) => {
  let broken = breakText(text, '16509,hosting', '16509,cloud'); // line 5
  broken = breakText(broken, 'AS20940,cdn', 'ASX,cdn'); // line 6
  broken = breakText(broken, '3320,isp', '3320,isp,extra'); // line 7
  broken = `${broken}13335,cdn\n13335,hosting\n0,isp\n`; // lines 13–15
  const result = source.parse(broken, 'as-category.csv');
  t.equal(result.read, 12);
  t.strictSame(result.rejected, [
    {
      line: 5,
      reason:
        'expected a category (isp, hosting, cdn, business, banking, education_research, government_admin) in column 2, got "cloud"',
    },
    { line: 6, reason: 'expected an AS number (1 to 4294967295, "AS" optional) in column 1, got "ASX"' },
    { line: 7, reason: 'expected 2 CSV columns (asn,category), got 3: "3320,isp,extra"' },
    {
      line: 14,
      reason: 'expected one category per AS number, but AS13335 already has "cdn" from line 3, got "hosting"',
    },
    { line: 15, reason: 'expected an AS number (1 to 4294967295, "AS" optional) in column 1, got "0"' },
  ]);
  t.equal(result.records.length, 6, 'the repeat of 13335,cdn on line 13 is kept once');
});
