import t from 'tap';
import { source } from '../../../builder/sources/x4bnet-datacenter.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const text = fixture('x4bnet-datacenter', 'ASN.txt');

t.test('excerpt: every ASN is hosting; an ASN listed twice is kept once', async (t) => {
  const result = source.parse(text, 'ASN.txt');
  t.equal(result.read, 22);
  t.equal(result.records.length, 20, 'AS55286 and AS20773 appear twice');
  t.strictSame(result.rejected, []);
  t.strictSame(result.records[0], { asn: 45090, category: 'hosting' });
  t.strictSame(result.records[16], { asn: 6698, category: 'hosting' }, 'TAB before the comment');
  t.strictSame(result.records[19], { asn: 21501, category: 'hosting' });
  t.ok(result.records.every((record) => record.category === 'hosting'));
});

t.test('a broken copy', async (t) => {
  let broken = breakText(text, 'AS3223 # VOXILITY', '3223 # VOXILITY'); // line 2
  broken = breakText(broken, 'AS4250 #', 'AS 4250 #'); // line 5
  const result = source.parse(`${broken}AS62904\n`, 'ASN.txt');
  t.equal(result.read, 23);
  t.strictSame(result.rejected, [
    { line: 2, reason: 'expected "AS<number>" (1 to 4294967295) before the comment, got "3223"' },
    { line: 5, reason: 'expected "AS<number>" (1 to 4294967295) before the comment, got "AS 4250"' },
  ]);
  t.equal(result.records.length, 18, 'a bare AS62904 without comment is a repeat');
});
