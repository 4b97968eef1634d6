/**
 * Reading a DNS answer the way the API classifies it (`outcome` in
 * docs/api.md#get-v1domaindomainhistory): the CNAME chain from the queried name, the records of the
 * queried type at the end of the chain, and one of the six outcomes. Shared by the collector
 * (dns-packet answers) and the ZDNS reader (JSON answers).
 */
import { canonicalIp } from '../../shared/ip.js';
import type { Outcome } from '../../shared/vocabulary.js';

/** One resource record of an answer section. */
export interface AnswerRecord {
  name: string;
  type: string;
  /** Target of a CNAME or PTR, address of an A or AAAA record. */
  data?: unknown;
}

export interface ReadAnswer {
  outcome: Outcome;
  /** Sorted, unique, canonical addresses (A, AAAA) or names (PTR); empty unless positive. */
  values: string[];
  /** The CNAME chain from the queried name, in order, lowercase without trailing dots. */
  cnames: string[];
}

/** Longest CNAME chain followed; a longer one (or a loop) is a malformed answer. */
export const MAX_CHAIN = 16;

const IPV4_RE = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** A name as the state keeps it: lowercase, no trailing dot. */
export function plainName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/**
 * The values and CNAME chain of a NOERROR answer for (qname, qtype): follows CNAME records from
 * the queried name and takes the records of qtype owned by the last name of the chain. Records of
 * other names (glue, unrelated data) are ignored. Positive when at least one value, else nodata;
 * malformed when a value is not an address of the type or the chain loops. `canonical`: the A and
 * AAAA data are already canonical addresses (formatted from their bytes, response.ts).
 */
export function readNoError(
  records: AnswerRecord[],
  qname: string,
  qtype: 'A' | 'AAAA' | 'PTR',
  canonical = false,
): ReadAnswer {
  const cnames: string[] = [];
  let owner = plainName(qname);
  for (let step = 0; ; step++) {
    let next: string | null = null;
    for (const r of records) {
      if (r.type === 'CNAME' && typeof r.data === 'string' && plainName(r.name) === owner) {
        next = plainName(r.data);
        break;
      }
    }
    if (next === null) break;
    if (step >= MAX_CHAIN || next === plainName(qname) || cnames.includes(next)) {
      return { outcome: 'malformed', values: [], cnames };
    }
    cnames.push(next);
    owner = next;
  }
  const values = new Set<string>();
  for (const r of records) {
    if (r.type !== qtype || plainName(r.name) !== owner) continue;
    if (typeof r.data !== 'string') return { outcome: 'malformed', values: [], cnames };
    let value: string | null;
    if (canonical && qtype !== 'PTR') value = r.data;
    else if (qtype === 'A') value = IPV4_RE.test(r.data) ? r.data : null;
    else if (qtype === 'AAAA') value = r.data.includes(':') ? canonicalIp(r.data) : null;
    else value = r.data === '' ? null : plainName(r.data);
    if (value === null) return { outcome: 'malformed', values: [], cnames };
    values.add(value);
  }
  if (values.size === 0) return { outcome: 'nodata', values: [], cnames };
  return { outcome: 'positive', values: values.size > 1 ? [...values].sort() : [...values], cnames };
}

/**
 * The outcome of a response code: NOERROR reads the records, NXDOMAIN is nxdomain (with the
 * chain that led to the missing name), SERVFAIL and every other code (REFUSED, NOTIMP, FORMERR…:
 * the resolver did not answer the question) are servfail.
 */
export function readAnswer(
  rcode: string,
  records: AnswerRecord[],
  qname: string,
  qtype: 'A' | 'AAAA' | 'PTR',
  canonical = false,
): ReadAnswer {
  if (rcode === 'NOERROR') return readNoError(records, qname, qtype, canonical);
  if (rcode === 'NXDOMAIN') {
    const chain = readNoError(records, qname, qtype, canonical);
    return { outcome: 'nxdomain', values: [], cnames: chain.cnames };
  }
  return { outcome: 'servfail', values: [], cnames: [] };
}
