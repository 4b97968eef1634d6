/** One row of an IP-to-ASN mapping (IPtoASN, ip-location-db), checked and made canonical. */
import { formatIp, parseIp } from '../../../shared/ip.js';
import type { AsnRangeRecord } from '../types.js';
import { parseAsnText } from './asn-text.js';
import { quote } from './lines.js';

export type CheckedRange = { ok: true; record: AsnRangeRecord } | { ok: false; reason: string };

const COUNTRY_RE = /^[A-Z]{2}$/;
/** Country values that mean "no country": IPtoASN writes `None` (unrouted) and `Unknown`. */
const NO_COUNTRY = new Set(['', 'None', 'Unknown']);
/** Description values that mean "no description". */
const NO_DESCRIPTION = new Set(['', 'Not routed']);

/** `country` is undefined for mappings without a country column. */
export function checkAsnRange(
  firstText: string,
  lastText: string,
  asnText: string,
  country: string | undefined,
  description: string,
): CheckedRange {
  const first = parseIp(firstText);
  if (!first)
    return { ok: false, reason: `expected an IP address in column 1 (range start), got ${quote(firstText)}` };
  const last = parseIp(lastText);
  if (!last)
    return { ok: false, reason: `expected an IP address in column 2 (range end), got ${quote(lastText)}` };
  if (first.version !== last.version) {
    return {
      ok: false,
      reason: `expected range start and end of one address family, got IPv${first.version} ${quote(firstText)} and IPv${last.version} ${quote(lastText)}`,
    };
  }
  if (first.value > last.value) {
    return {
      ok: false,
      reason: `expected range start <= range end, got ${quote(firstText)} > ${quote(lastText)}`,
    };
  }
  const asn = parseAsnText(asnText, true);
  if (asn === null) {
    return {
      ok: false,
      reason: `expected an AS number (0 to 4294967295) in column 3, got ${quote(asnText)}`,
    };
  }
  let countryCode: string | null = null;
  if (country !== undefined && !NO_COUNTRY.has(country)) {
    if (!COUNTRY_RE.test(country)) {
      return {
        ok: false,
        reason: `expected a two-letter country code, "None" or "Unknown" in column 4, got ${quote(country)}`,
      };
    }
    countryCode = country;
  }
  const descr = description.trim();
  return {
    ok: true,
    record: {
      // A strict dotted quad is already canonical; IPv6 is rewritten per RFC 5952.
      first: first.version === 4 ? firstText : formatIp(first),
      last: last.version === 4 ? lastText : formatIp(last),
      asn,
      country: countryCode,
      descr: asn === 0 || NO_DESCRIPTION.has(descr) ? null : descr,
    },
  };
}
