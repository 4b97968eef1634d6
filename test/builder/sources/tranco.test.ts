import t from 'tap';
import { source } from '../../../builder/sources/tranco.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const text = fixture('tranco', 'top-1m.csv');

t.test('hand-written list in Tranco format', async (t) => {
  const result = source.parse(text, 'top-1m.csv');
  t.equal(result.read, 12);
  t.strictSame(result.rejected, []);
  t.strictSame(result.records[0], { rank: 1, domain: 'google.com' });
  t.strictSame(result.records[11], { rank: 12, domain: 'akamaiedge.net' });
  t.equal(result.publishedAt, undefined);
});

t.test('CRLF (as Tranco serves it), normalisation and repeats', async (t) => {
  const result = source.parse('1,Google.com\r\n2,bücher.de.\r\n3,google.com\r\n', 'top-1m.csv');
  t.strictSame(result.records, [
    { rank: 1, domain: 'google.com' },
    { rank: 2, domain: 'xn--bcher-kva.de' },
  ]);
  t.equal(result.read, 3, 'google.com on line 3 is a repeat: read, not rejected');
  t.strictSame(result.rejected, []);
});

t.test('a broken copy: a bad domain is a rejected row', async (t) => {
  let broken = breakText(text, '3,mail.ru', '3,mail'); // line 3
  broken = breakText(broken, '5,dzen.ru', 'five,dzen.ru'); // line 5
  broken = breakText(broken, '8,apple.com', '8,https://apple.com'); // line 8
  broken = breakText(broken, '10,googleapis.com', '10,googleapis.com,x'); // line 10
  const result = source.parse(broken, 'top-1m.csv');
  t.equal(result.read, 12);
  t.strictSame(result.rejected, [
    {
      line: 3,
      reason:
        'expected a domain in column 2: "mail" has only one label: a domain needs at least two, e.g. example.com',
    },
    { line: 5, reason: 'expected a positive rank in column 1, got "five"' },
    {
      line: 8,
      reason:
        'expected a domain in column 2: remove the scheme "https://": send only the host name, e.g. example.com',
    },
    { line: 10, reason: 'expected 2 CSV columns (rank,domain), got "10,googleapis.com,x"' },
  ]);
});
