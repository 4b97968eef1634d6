import t from 'tap';
import { isNormalizedDomain, normalizeDomain } from '../../shared/domain.js';

t.test('accepted names, normalised', async (t) => {
  const cases: [string, string][] = [
    ['example.com', 'example.com'],
    ['Example.COM', 'example.com'],
    ['example.com.', 'example.com'],
    ['www.example.co.uk', 'www.example.co.uk'],
    ['xn--bcher-kva.de', 'xn--bcher-kva.de'],
    ['bücher.de', 'xn--bcher-kva.de'],
    ['BÜCHER.de', 'xn--bcher-kva.de'],
    ['例え.テスト', 'xn--r8jz45g.xn--zckzah'],
    ['münchen.de', 'xn--mnchen-3ya.de'],
    ['example\u3002com', 'example.com'], // UTS #46 maps the ideographic full stop to "."
    ['exa\u200bmple.com', 'example.com'], // …and drops a zero-width space, as browsers do
    ['a-b.example', 'a-b.example'],
    ['1password.com', '1password.com'],
    ['123.example', '123.example'],
    ['xn--p1ai.xn--p1ai', 'xn--p1ai.xn--p1ai'],
    [`${'a'.repeat(63)}.com`, `${'a'.repeat(63)}.com`],
  ];
  for (const [input, domain] of cases) {
    t.strictSame(normalizeDomain(input), { ok: true, domain }, input);
  }
});

t.test('total length: 253 characters at most', async (t) => {
  const label = 'a'.repeat(63);
  const name253 = `${label}.${label}.${label}.${'a'.repeat(61)}`;
  t.equal(name253.length, 253);
  t.strictSame(normalizeDomain(name253), { ok: true, domain: name253 });
  t.strictSame(
    normalizeDomain(`${name253}.`),
    { ok: true, domain: name253 },
    'the trailing dot does not count',
  );
  t.strictSame(normalizeDomain(`${name253}a`), { ok: false, reason: 'domain is longer than 253 characters' });
});

t.test('refused, with a reason the caller can act on', async (t) => {
  const cases: [string, string][] = [
    ['', 'domain is empty'],
    [' example.com', 'domain contains whitespace'],
    ['example.com\n', 'domain contains whitespace'],
    ['exa mple.com', 'domain contains whitespace'],
    ['http://example.com', 'remove the scheme "http://": send only the host name, e.g. example.com'],
    ['HTTPS://example.com/', 'remove the scheme "HTTPS://": send only the host name, e.g. example.com'],
    ['example.com/path', 'remove the path "/path": send only the host name, e.g. example.com'],
    ['example.com?q=1', 'remove the path "?q=1": send only the host name, e.g. example.com'],
    ['example.com:8080', 'remove the port ":8080": send only the host name, e.g. example.com'],
    ['user@example.com', 'domain contains "@": send only the host name, e.g. example.com'],
    ['192.0.2.1', '"192.0.2.1" is an IP address, not a domain: look it up as an IP instead'],
    ['192.0.2.1.', '"192.0.2.1." is an IP address, not a domain: look it up as an IP instead'],
    ['2001:db8::1', '"2001:db8::1" is an IP address, not a domain: look it up as an IP instead'],
    ['[2001:db8::1]', '"[2001:db8::1]" is an IP address, not a domain: look it up as an IP instead'],
    ['999.1.1.1', 'the last label "1" is all digits: no top-level domain is numeric'],
    ['localhost', '"localhost" has only one label: a domain needs at least two, e.g. example.com'],
    ['com.', '"com." has only one label: a domain needs at least two, e.g. example.com'],
    ['example..com', 'domain has an empty label (a leading dot or two dots in a row)'],
    ['.example.com', 'domain has an empty label (a leading dot or two dots in a row)'],
    ['example.com..', 'domain has an empty label (a leading dot or two dots in a row)'],
    ['-example.com', 'label "-example" starts or ends with a hyphen'],
    ['example-.com', 'label "example-" starts or ends with a hyphen'],
    [
      '_dmarc.example.com',
      'label "_dmarc" contains "_": only letters, digits and hyphens are allowed (underscores are not allowed in host names)',
    ],
    ['ex!ample.com', 'label "ex!ample" contains "!": only letters, digits and hyphens are allowed'],
    [`${'a'.repeat(64)}.com`, `label "${'a'.repeat(64)}" is longer than 63 characters`],
    ['xn--abc-.com', 'label "xn--abc-" starts or ends with a hyphen'],
    ['xn--zz.com', 'label "xn--zz" is not valid punycode'],
    ['a\u0001b.com', 'label "a\\u0001b" contains "\\u0001": only letters, digits and hyphens are allowed'],
    ['bad\u00a0.com', 'domain contains whitespace'],
    ['xn--abc.com', 'label "xn--abc" is not valid punycode'],
  ];
  for (const [input, reason] of cases) {
    t.strictSame(normalizeDomain(input), { ok: false, reason }, JSON.stringify(input));
  }
});

t.test('isNormalizedDomain is true only where normalizeDomain returns the text itself', async (t) => {
  const yes = ['example.com', 'a.b', 'www.example.co.uk', '1password.com', '123.example', 'a-b.c-d', 'x.y1'];
  const no = [
    'Example.com', // not lowercase
    'example.com.', // trailing dot
    'example', // one label
    'a..b',
    '-a.com',
    'a-.com',
    'a_b.com', // underscore: refused by normalizeDomain
    'xn--bcher-kva.de', // valid punycode, but checked the long way
    'xn--abc-.de', // invalid punycode
    '1.2.3.4', // an address
    'host.123', // numeric last label
    'bücher.de',
    ' example.com',
    'example.com:80',
    `${'a'.repeat(64)}.com`, // label too long
    `${'a.'.repeat(126)}com`, // 255 characters
    '',
  ];
  const long = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`; // 253
  t.equal(long.length, 253);
  for (const text of [...yes, long]) {
    t.equal(isNormalizedDomain(text), true, text);
    t.same(normalizeDomain(text), { ok: true, domain: text }, text);
  }
  for (const text of no) {
    t.equal(isNormalizedDomain(text), false, text);
    const n = normalizeDomain(text);
    if (n.ok && text !== 'xn--bcher-kva.de') t.not(n.domain, text, text);
  }
});
