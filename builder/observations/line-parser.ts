/**
 * DNS observations: the NDJSON line format (docs/observations-format.md) read as a string, every
 * rule with its error message. The byte scanner (line-scanner.ts) reads the common form of a line
 * faster and accepts a line only when parseObservationLine would accept it with the same record.
 */
import type { ObservationRecord } from '../sources/types.js';
import { canonicalIp, parseIp } from '../../shared/ip.js';
import { normalizeDomain } from '../../shared/domain.js';
import { OUTCOMES, type Outcome } from '../../shared/vocabulary.js';
import { parseIsoToEpoch } from '../../shared/time.js';

const OUTCOME_SET = new Set<string>(OUTCOMES);
const FAST_NAME = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)+$/;
const FAST_IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

export type ParsedLine = { ok: true; record: ObservationRecord } | { ok: false; reason: string };

function normalizeName(value: unknown, field: string): string | { error: string } {
  if (typeof value !== 'string') return { error: `expected "${field}" to be a string` };
  if (value.length <= 253 && FAST_NAME.test(value)) return value;
  const n = normalizeDomain(value.endsWith('.') ? value : value);
  return n.ok ? n.domain : { error: `"${field}" ${JSON.stringify(value)}: ${n.reason}` };
}

// Consecutive lines mostly share their time: the last text and its value are kept.
let lastTimeText = '';
let lastTime: number | null = null;

function parseTime(text: string): number | null {
  if (text !== lastTimeText) {
    lastTime = parseIsoToEpoch(text);
    lastTimeText = text;
  }
  return lastTime;
}

/** Parses one NDJSON line into an observation, or says what is wrong with it. */
export function parseObservationLine(line: string): ParsedLine {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return { ok: false, reason: 'expected one JSON object per line' };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, reason: 'expected one JSON object per line' };
  }
  const o = raw as Record<string, unknown>;
  const name = normalizeName(o.name, 'name');
  if (typeof name !== 'string') return { ok: false, reason: name.error };
  const type = o.type;
  if (type !== 'A' && type !== 'AAAA') {
    return { ok: false, reason: `expected "type" A or AAAA, got ${JSON.stringify(type)}` };
  }
  const time = typeof o.time === 'string' ? parseTime(o.time) : null;
  if (time === null) {
    return { ok: false, reason: `expected "time" as ISO 8601 with offset, got ${JSON.stringify(o.time)}` };
  }
  const outcome = o.outcome;
  if (typeof outcome !== 'string' || !OUTCOME_SET.has(outcome)) {
    return {
      ok: false,
      reason: `expected "outcome" one of ${OUTCOMES.join(', ')}, got ${JSON.stringify(outcome)}`,
    };
  }
  const rawValues = o.values ?? [];
  if (!Array.isArray(rawValues))
    return { ok: false, reason: 'expected "values" to be an array of addresses' };
  const values: string[] = [];
  for (const v of rawValues) {
    if (typeof v !== 'string') return { ok: false, reason: 'expected "values" to be an array of addresses' };
    let canonical: string | null;
    if (type === 'A') {
      canonical = FAST_IPV4.test(v) ? v : null;
    } else {
      const ip = parseIp(v);
      canonical = ip && ip.version === 6 ? canonicalIp(v) : null;
    }
    if (canonical === null) {
      return {
        ok: false,
        reason: `${JSON.stringify(v)} is not an ${type === 'A' ? 'IPv4' : 'IPv6'} address (type ${type})`,
      };
    }
    values.push(canonical);
  }
  if (outcome === 'positive' && values.length === 0) {
    return { ok: false, reason: 'a positive outcome needs at least one address in "values"' };
  }
  if (outcome !== 'positive' && values.length > 0) {
    return { ok: false, reason: `outcome ${outcome} carries no addresses; "values" must be empty` };
  }
  const rawCnames = o.cnames ?? [];
  if (!Array.isArray(rawCnames)) return { ok: false, reason: 'expected "cnames" to be an array of names' };
  const cnames: string[] = [];
  for (const c of rawCnames) {
    const n = normalizeName(typeof c === 'string' && c.endsWith('.') ? c.slice(0, -1) : c, 'cnames');
    if (typeof n !== 'string') return { ok: false, reason: n.error };
    cnames.push(n);
  }
  const sorted = values.length > 1 ? [...new Set(values)].sort() : values;
  return { ok: true, record: { name, type, time, outcome: outcome as Outcome, values: sorted, cnames } };
}
