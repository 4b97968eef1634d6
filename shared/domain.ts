/**
 * Domain names as the API accepts them and the seed list stores them: lowercase, no trailing
 * dot, Unicode labels in punycode (`xn--`), at least two labels of letters, digits and
 * hyphens. Used for request parameters, so every reason is written for the caller.
 *
 * Underscores are refused: they are legal in DNS owner names (`_dmarc`) but not in host
 * names (RFC 952/1123), and the service resolves only host names (seed domains and `www.`).
 *
 * Unicode labels go through UTS #46 with the `tr46` package (the WHATWG URL standard's
 * reference implementation), not node:url: Node's own IDNA changed across versions (Node 24
 * returns an undecodable `xn--` label unchanged where Node 20 returned ""), and a lookup key
 * must not depend on the Node that runs the service. The lockfile pins the Unicode tables.
 */
import tr46 from 'tr46';
import { parseIp } from './ip.js';

/** The WHATWG URL standard's domain-to-ASCII settings (not strict: our LDH rules follow it). */
const IDNA: tr46.ToASCIIOptions = {
  checkBidi: true,
  checkJoiners: true,
  checkHyphens: false,
  useSTD3ASCIIRules: false,
  transitionalProcessing: false,
  verifyDNSLength: false,
  ignoreInvalidPunycode: false,
};

export type NormalizedDomain = { ok: true; domain: string } | { ok: false; reason: string };

const MAX_LENGTH = 253;
const MAX_LABEL = 63;
const LDH_LABEL_RE = /^[a-z0-9-]+$/;
const SCHEME_RE = /^[a-z][a-z0-9+.-]*:\/\//i;
const EXAMPLE = 'send only the host name, e.g. example.com';

function fail(reason: string): NormalizedDomain {
  return { ok: false, reason };
}

function show(text: string): string {
  return JSON.stringify(text.length > 70 ? `${text.slice(0, 70)}…` : text);
}

const NORMAL_NAME_RE = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const DIGITS_TLD_RE = /\.\d+$/;

/**
 * True only when normalizeDomain(text) returns text itself: already lowercase LDH labels of at
 * most 63 characters with no hyphen at either end, at least two, no `xn--` anywhere (punycode is
 * checked the long way), a last label that is not all digits, at most 253 characters. A cheap
 * test for bulk input (the seed list) that is nearly always in this form; false says nothing.
 */
export function isNormalizedDomain(text: string): boolean {
  return (
    text.length <= MAX_LENGTH &&
    NORMAL_NAME_RE.test(text) &&
    !DIGITS_TLD_RE.test(text) &&
    !text.includes('xn--')
  );
}

export function normalizeDomain(input: string): NormalizedDomain {
  if (input === '') return fail('domain is empty');
  if (input.length > 1024) return fail(`domain is longer than ${MAX_LENGTH} characters`);
  if (/\s/.test(input)) return fail('domain contains whitespace');
  const scheme = SCHEME_RE.exec(input);
  if (scheme) return fail(`remove the scheme ${show(scheme[0])}: ${EXAMPLE}`);
  const pathAt = input.search(/[/?#]/);
  if (pathAt >= 0) return fail(`remove the path ${show(input.slice(pathAt))}: ${EXAMPLE}`);
  if (input.includes('@')) return fail(`domain contains "@": ${EXAMPLE}`);
  if (input.startsWith('[') || parseIp(input) || parseIp(input.replace(/\.$/, ''))) {
    return fail(`${show(input)} is an IP address, not a domain: look it up as an IP instead`);
  }
  const colon = input.indexOf(':');
  if (colon >= 0) return fail(`remove the port ${show(input.slice(colon))}: ${EXAMPLE}`);

  let name = input.toLowerCase();
  if (name.endsWith('.')) name = name.slice(0, -1);
  // Non-ASCII labels: UTS #46 mapping and punycode, as browsers do. ASCII names skip it, so
  // that WHATWG's IPv4 shorthands (`0x7f.1`) are not rewritten into addresses.
  if (/[\u0080-\uffff]/.test(name)) {
    const ascii = tr46.toASCII(name, IDNA);
    if (ascii === null || ascii === '')
      return fail(`${show(input)} is not a valid internationalized domain name`);
    name = ascii.endsWith('.') ? ascii.slice(0, -1) : ascii;
  }
  if (name.length > MAX_LENGTH) return fail(`domain is longer than ${MAX_LENGTH} characters`);

  const labels = name.split('.');
  if (labels.some((label) => label === '')) {
    return fail('domain has an empty label (a leading dot or two dots in a row)');
  }
  if (labels.length < 2) {
    return fail(`${show(input)} has only one label: a domain needs at least two, e.g. example.com`);
  }
  for (const label of labels) {
    const reason = labelProblem(label);
    if (reason) return fail(reason);
  }
  if (/^\d+$/.test(labels[labels.length - 1]!)) {
    return fail(
      `the last label ${show(labels[labels.length - 1]!)} is all digits: no top-level domain is numeric`,
    );
  }
  return { ok: true, domain: name };
}

function labelProblem(label: string): string | null {
  if (label.length > MAX_LABEL) return `label ${show(label)} is longer than ${MAX_LABEL} characters`;
  if (!LDH_LABEL_RE.test(label)) {
    const bad = [...label].find((ch) => !/[a-z0-9-]/.test(ch)) ?? '';
    const hint = bad === '_' ? ' (underscores are not allowed in host names)' : '';
    return `label ${show(label)} contains ${show(bad)}: only letters, digits and hyphens are allowed${hint}`;
  }
  if (label.startsWith('-') || label.endsWith('-'))
    return `label ${show(label)} starts or ends with a hyphen`;
  if (label.startsWith('xn--')) {
    // A valid A-label decodes to a valid U-label that encodes back to itself (`xn--zz` does
    // not decode, `xn--bcher-2pa` decodes to "bÜcher", whose "Ü" UTS #46 maps to "ü").
    const unicode = tr46.toUnicode(label, IDNA);
    if (unicode.error || tr46.toASCII(unicode.domain, IDNA) !== label)
      return `label ${show(label)} is not valid punycode`;
  }
  return null;
}
