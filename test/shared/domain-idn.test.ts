// Internationalized names normalise to the same A-labels, and the same invalid A-labels are
// refused, whatever Node runs the service (Node 24's url.domainToASCII passes `xn--zz` through
// unchanged where Node 20's returned ""): shared/domain.ts uses the tr46 package.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { normalizeDomain } from '../../shared/domain.js';

const rows = readFileSync(new URL('../fixtures/idn/names.tsv', import.meta.url), 'utf8')
  .split('\n')
  .filter((line) => line !== '' && !line.startsWith('#'))
  .map((line) => line.split('\t') as [string, string]);

t.test('real internationalized names become their A-labels', async (t) => {
  t.equal(rows.length, 16, 'every row of test/fixtures/idn/names.tsv');
  for (const [unicode, ascii] of rows) {
    t.strictSame(normalizeDomain(unicode), { ok: true, domain: ascii }, unicode);
    t.strictSame(normalizeDomain(ascii), { ok: true, domain: ascii }, `${ascii} is kept`);
    t.strictSame(normalizeDomain(ascii.toUpperCase()), { ok: true, domain: ascii }, `${ascii} upper case`);
    t.strictSame(
      normalizeDomain(`${unicode}.`),
      { ok: true, domain: ascii },
      `${unicode} with a trailing dot`,
    );
  }
  t.strictSame(
    normalizeDomain('ＢÜＣＨＥＲ.de'),
    { ok: true, domain: 'xn--bcher-kva.de' },
    'full-width, upper case',
  );
  t.strictSame(normalizeDomain('президент.РФ'), { ok: true, domain: 'xn--d1abbgf6aiiy.xn--p1ai' });
});

t.test('A-labels that do not decode to a valid U-label are refused', async (t) => {
  const punycode = (label: string) => `label "${label}" is not valid punycode`;
  const cases: [string, string][] = [
    ['xn--zz.com', punycode('xn--zz')], // not decodable
    ['xn--a.com', punycode('xn--a')], // decodes to nothing
    ['xn--abc.com', punycode('xn--abc')],
    ['xn--bcher-2pa.de', punycode('xn--bcher-2pa')], // "bÜcher": a mapped character
    ['xn--ab-m1t.com', punycode('xn--ab-m1t')], // "a\u200db": a joiner out of context
    ['xn--ex-8tb.com', punycode('xn--ex-8tb')], // "éx" not in NFC
    ['xn--a-zhc.com', punycode('xn--a-zhc')], // Hebrew and Latin in one label
    ['xn--fass-.de', 'label "xn--fass-" starts or ends with a hyphen'], // "fass": plain ASCII
    ['a\u200db.com', '"a\u200db.com" is not a valid internationalized domain name'],
    ['xn--zz.bücher.de', '"xn--zz.bücher.de" is not a valid internationalized domain name'],
  ];
  for (const [input, reason] of cases) {
    t.strictSame(normalizeDomain(input), { ok: false, reason }, JSON.stringify(input));
  }
});
