/**
 * DNS observations: the NDJSON line format (docs/observations-format.md) and how lines reach the
 * answer-interval state machine of SPEC.md ("States and transitions", dns-state-machine.ts). The
 * collector feeds the same state machine.
 *
 * Two readers of a line give the same result: `parseObservationLine` (a string, JSON.parse, every
 * rule with its error message) and `ObservationLineScanner`, which reads the bytes of the common
 * form (compact JSON, lowercase names, canonical sorted addresses, no escapes) without creating
 * strings and gives up on anything else, which then goes to parseObservationLine. The scanner
 * accepts a line only when parseObservationLine would accept it with the same record.
 */
import type { StateDb } from './state.js';
import type { ObservationRecord } from './sources/types.js';
import { canonicalIp, parseIp } from '../shared/ip.js';
import { normalizeDomain } from '../shared/domain.js';
import { OUTCOMES, type Outcome } from '../shared/vocabulary.js';
import { parseIsoToEpoch } from '../shared/time.js';
import {
  DnsStateMachine,
  FNV_OFFSET,
  FNV_PRIME,
  OUTCOME_CODES,
  ObservationFields,
  POSITIVE,
  emptyCounts,
  hashBytes,
  type ApplyCounts,
  type SaveResult,
} from './dns-state-machine.js';

export { emptyCounts, type ApplyCounts, type SaveResult } from './dns-state-machine.js';

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

// ---------------------------------------------------------------------------------------------
// The byte scanner of the common form

const QUOTE = 0x22;
const COMMA = 0x2c;
const DASH = 0x2d;
const DOT = 0x2e;
const COLON = 0x3a;
const LBRACKET = 0x5b;
const BACKSLASH = 0x5c;
const RBRACKET = 0x5d;
const UNDERSCORE = 0x5f;
const LBRACE = 0x7b;
const RBRACE = 0x7d;

const KEY_NAME = 1;
const KEY_TYPE = 2;
const KEY_TIME = 4;
const KEY_OUTCOME = 8;
const KEY_VALUES = 16;
const KEY_CNAMES = 32;
const REQUIRED_KEYS = KEY_NAME | KEY_TYPE | KEY_TIME | KEY_OUTCOME;
const KEY_BYTES: Buffer[] = [];
KEY_BYTES[KEY_NAME] = Buffer.from('name');
KEY_BYTES[KEY_TYPE] = Buffer.from('type');
KEY_BYTES[KEY_TIME] = Buffer.from('time');
KEY_BYTES[KEY_OUTCOME] = Buffer.from('outcome');
KEY_BYTES[KEY_VALUES] = Buffer.from('values');
KEY_BYTES[KEY_CNAMES] = Buffer.from('cnames');
/** Key text after the opening quote, with the closing quote and the colon. */
const KEY_LITERALS: Buffer[] = KEY_BYTES.map((k) => Buffer.from(`${Buffer.from(k).toString()}":`));
/** The key a first byte suggests (t: type, or time when the second byte is i). */
const KEY_OF_FIRST_BYTE = new Uint8Array(256);
KEY_OF_FIRST_BYTE[0x6e] = KEY_NAME;
KEY_OF_FIRST_BYTE[0x74] = KEY_TYPE;
KEY_OF_FIRST_BYTE[0x6f] = KEY_OUTCOME;
KEY_OF_FIRST_BYTE[0x76] = KEY_VALUES;
KEY_OF_FIRST_BYTE[0x63] = KEY_CNAMES;
/** Text of each outcome code. */
const OUTCOME_BYTES: Buffer[] = [];
for (const o of OUTCOMES) OUTCOME_BYTES[OUTCOME_CODES.get(o)!] = Buffer.from(o);
/** Outcome text after the opening quote, with the closing quote. */
const OUTCOME_LITERALS: Buffer[] = OUTCOME_BYTES.map((o) => Buffer.from(`${Buffer.from(o).toString()}"`));
/** The outcome a first byte suggests (n: nxdomain, or nodata when the second byte is o). */
const OUTCOME_OF_FIRST_BYTE = new Uint8Array(256);
for (const o of OUTCOMES) {
  if (o !== 'nodata') OUTCOME_OF_FIRST_BYTE[o.charCodeAt(0)] = OUTCOME_CODES.get(o)!;
}
const OUTCOME_NODATA = OUTCOME_CODES.get('nodata')!;
const MAX_FAST_VALUES = 32;
const MAX_TIME_BYTES = 64;

/**
 * Whether bytes [start, start + length) of b are `expected`. Every buffer the scanner compares is
 * a Buffer (lines, literals, the cached time): one kind of array keeps element loads monomorphic.
 */
function equalBytes(b: Buffer, start: number, length: number, expected: Buffer): boolean {
  if (length !== expected.length) return false;
  for (let i = 0; i < length; i++) if (b[start + i] !== expected[i]) return false;
  return true;
}

/** KEY_* of the key in bytes [start, start + length), 0 for any other key. */
function keyOf(b: Buffer, start: number, length: number): number {
  let key = 0;
  const c = b[start];
  if (length === 4)
    key = c === 0x6e ? KEY_NAME : c !== 0x74 ? 0 : b[start + 1] === 0x79 ? KEY_TYPE : KEY_TIME;
  else if (length === 7) key = KEY_OUTCOME;
  else if (length === 6) key = c === 0x76 ? KEY_VALUES : KEY_CNAMES;
  return key !== 0 && equalBytes(b, start, length, KEY_BYTES[key]!) ? key : 0;
}

/** Negative, zero or positive as bytes [s1, e1) sort before, equal or after [s2, e2). */
function compareBytes(b: Buffer, s1: number, e1: number, s2: number, e2: number): number {
  const n = Math.min(e1 - s1, e2 - s2);
  for (let i = 0; i < n; i++) {
    const d = b[s1 + i]! - b[s2 + i]!;
    if (d !== 0) return d;
  }
  return e1 - s1 - (e2 - s2);
}

/** FAST_IPV4: a dotted quad without leading zeros. */
function isCanonicalIpv4(b: Buffer, start: number, end: number): boolean {
  let p = start;
  for (let part = 1; ; part++) {
    const first = b[p]!;
    if (p >= end || first < 0x30 || first > 0x39) return false;
    let value = first - 0x30;
    let digits = 1;
    p++;
    while (p < end && b[p]! >= 0x30 && b[p]! <= 0x39) {
      if (++digits > 3) return false;
      value = value * 10 + b[p]! - 0x30;
      p++;
    }
    if ((digits > 1 && first === 0x30) || value > 255) return false;
    if (p === end) return part === 4;
    if (part === 4 || b[p] !== DOT) return false;
    p++;
  }
}

/** Index of the quote closing a canonical IPv4 address that starts at start, or -1. */
function ipv4End(b: Buffer, start: number, last: number): number {
  let p = start;
  for (let part = 1; ; part++) {
    const first = b[p]!;
    if (p >= last || first < 0x30 || first > 0x39) return -1;
    let value = first - 0x30;
    let digits = 1;
    p++;
    while (b[p]! >= 0x30 && b[p]! <= 0x39) {
      if (++digits > 3) return -1;
      value = value * 10 + b[p]! - 0x30;
      p++;
    }
    if ((digits > 1 && first === 0x30) || value > 255) return -1;
    if (b[p] === QUOTE) return part === 4 && p < last ? p : -1;
    if (part === 4 || b[p] !== DOT) return -1;
    p++;
  }
}

/** Index of the quote closing a canonical IPv6 address (see isCanonicalIpv6) that starts at start, or -1. */
function ipv6End(b: Buffer, start: number, last: number, groups: Int32Array): number {
  let p = start;
  while (p < last && p - start <= 39) {
    const c = b[p]!;
    if (c === QUOTE) return isCanonicalIpv6(b, start, p, groups) ? p : -1;
    if (!((c >= 0x30 && c <= 0x3a) || (c >= 0x61 && c <= 0x66))) return -1;
    p++;
  }
  return -1;
}

/**
 * True when canonicalIp() would return the text unchanged for an IPv6 address: lowercase hex
 * groups without leading zeros, and `::` exactly where RFC 5952 puts it (the longest run of two
 * or more zero groups, the first on a tie), nowhere if there is no such run.
 */
function isCanonicalIpv6(b: Buffer, start: number, end: number, groups: Int32Array): boolean {
  const length = end - start;
  if (length < 2 || length > 39) return false;
  let count = 0;
  let gapAt = -1;
  let p = start;
  if (b[p] === COLON) {
    if (b[p + 1] !== COLON) return false;
    gapAt = 0;
    p += 2;
  }
  while (p < end) {
    const first = b[p]!;
    let value = 0;
    let digits = 0;
    while (p < end) {
      const c = b[p]!;
      const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
      if (d < 0) break;
      value = value * 16 + d;
      digits++;
      p++;
    }
    if (digits === 0 || digits > 4 || (digits > 1 && first === 0x30) || count === 8) return false;
    groups[count++] = value;
    if (p === end) break;
    if (b[p] !== COLON) return false;
    p++;
    if (p === end) return false;
    if (b[p] === COLON) {
      if (gapAt >= 0) return false;
      gapAt = count;
      p++;
    }
  }
  if (gapAt < 0 ? count !== 8 : count > 6) return false;
  // The longest run of zero groups over all eight (the gap stands for 8 - count zeros).
  const gap = gapAt < 0 ? 0 : 8 - count;
  let bestStart = -1;
  let bestLength = 0;
  let runStart = -1;
  for (let i = 0; i <= 8; i++) {
    const zero =
      i < 8 && (gapAt < 0 || i < gapAt ? groups[i] === 0 : i < gapAt + gap ? true : groups[i - gap] === 0);
    if (zero) {
      if (runStart < 0) runStart = i;
    } else if (runStart >= 0) {
      if (i - runStart > bestLength) {
        bestStart = runStart;
        bestLength = i - runStart;
      }
      runStart = -1;
    }
  }
  return gapAt < 0 ? bestLength < 2 : bestLength >= 2 && bestStart === gapAt && bestLength === gap;
}

/**
 * Reads the bytes of an observation line in its common form into ObservationFields. Returns
 * false for anything else (whitespace between tokens, escapes, non-ASCII, duplicate keys,
 * uppercase or trailing-dot names, non-canonical or unsorted addresses, nested values, invalid
 * lines): such a line goes to parseObservationLine, which accepts it or says why not.
 */
export class ObservationLineScanner {
  private readonly valueStarts = new Int32Array(MAX_FAST_VALUES);
  private readonly valueEnds = new Int32Array(MAX_FAST_VALUES);
  private readonly groups = new Int32Array(8);
  private readonly timeBytes = Buffer.alloc(MAX_TIME_BYTES);
  /** The sorted values' JSON text when the line lists them in another order (at most 32 × 41 + 2 bytes). */
  private readonly sortedVals = Buffer.alloc(MAX_FAST_VALUES * 42 + 2);
  private sortedLength = 0;
  private timeLength = -1;
  private timeValue = 0;
  /** Set by nameEnd(): FNV-1a of the name it read. */
  private hash = 0;

  scan(b: Buffer, start: number, end: number, f: ObservationFields): boolean {
    const last = end - 1;
    if (last <= start || b[start] !== LBRACE || b[last] !== RBRACE) return false;
    let seen = 0;
    let aaaa = -1;
    let time = 0;
    let outcome = 0;
    let nameStart = 0;
    let nameEnd = 0;
    let nameHash = 0;
    let valsStart = 0;
    let valsEnd = 0;
    let nVals = 0;
    let cnamesStart = 0;
    let cnamesEnd = 0;
    /** Values already checked against the type while read (type came first). */
    let checked = false;
    let i = start + 1;
    for (;;) {
      // "key": the usual keys are recognised by their text (with the closing quote and colon)
      if (b[i] !== QUOTE) return false;
      const keyStart = i + 1;
      let key = KEY_OF_FIRST_BYTE[b[keyStart]!]!;
      if (key === KEY_TYPE && b[keyStart + 1] === 0x69) key = KEY_TIME;
      if (key !== 0 && equalBytes(b, keyStart, KEY_LITERALS[key]!.length, KEY_LITERALS[key]!)) {
        i = keyStart + KEY_LITERALS[key]!.length;
      } else {
        const keyEnd = this.stringEnd(b, keyStart, last);
        if (keyEnd < 0 || b[keyEnd + 1] !== COLON) return false;
        i = keyEnd + 2;
        key = keyOf(b, keyStart, keyEnd - keyStart);
      }
      if ((seen & key) !== 0) return false;
      seen |= key;
      switch (key) {
        case KEY_NAME: {
          if (b[i] !== QUOTE) return false;
          nameStart = i + 1;
          nameEnd = this.nameEnd(b, nameStart, last);
          if (nameEnd < 0) return false;
          nameHash = this.hash;
          i = nameEnd + 1;
          break;
        }
        case KEY_TYPE: {
          if (b[i] !== QUOTE || b[i + 1] !== 0x41) return false;
          if (b[i + 2] === QUOTE) {
            aaaa = 0;
            i += 3;
          } else if (b[i + 2] === 0x41 && b[i + 3] === 0x41 && b[i + 4] === 0x41 && b[i + 5] === QUOTE) {
            aaaa = 1;
            i += 6;
          } else return false;
          break;
        }
        case KEY_TIME: {
          if (b[i] !== QUOTE) return false;
          const s = i + 1;
          // Consecutive lines mostly share their time.
          const n = this.timeLength;
          if (n > 0 && b[s + n] === QUOTE && equalBytes(b, s, n, this.timeBytes)) {
            time = this.timeValue;
            i = s + n + 1;
            break;
          }
          const e = this.stringEnd(b, s, last);
          if (e < 0) return false;
          time = this.time(b, s, e);
          if (time !== time) return false;
          i = e + 1;
          break;
        }
        case KEY_OUTCOME: {
          if (b[i] !== QUOTE) return false;
          const s = i + 1;
          const first = b[s]!;
          outcome = first === 0x6e && b[s + 1] === 0x6f ? OUTCOME_NODATA : OUTCOME_OF_FIRST_BYTE[first]!;
          if (
            outcome === 0 ||
            !equalBytes(b, s, OUTCOME_LITERALS[outcome]!.length, OUTCOME_LITERALS[outcome]!)
          )
            return false;
          i = s + OUTCOME_LITERALS[outcome]!.length;
          break;
        }
        case KEY_VALUES: {
          if (b[i] !== LBRACKET) return false;
          valsStart = i;
          i++;
          if (b[i] === RBRACKET) i++;
          else {
            if (aaaa >= 0) checked = true;
            for (;;) {
              if (b[i] !== QUOTE || nVals === MAX_FAST_VALUES) return false;
              const e =
                aaaa === 0
                  ? ipv4End(b, i + 1, last)
                  : aaaa === 1
                    ? ipv6End(b, i + 1, last, this.groups)
                    : this.stringEnd(b, i + 1, last);
              if (e < 0) return false;
              this.valueStarts[nVals] = i + 1;
              this.valueEnds[nVals++] = e;
              i = e + 1;
              if (b[i] === COMMA) i++;
              else if (b[i] === RBRACKET) {
                i++;
                break;
              } else return false;
            }
          }
          valsEnd = i;
          break;
        }
        case KEY_CNAMES: {
          if (b[i] !== LBRACKET) return false;
          cnamesStart = i;
          i++;
          if (b[i] === RBRACKET) i++;
          else {
            for (;;) {
              if (b[i] !== QUOTE) return false;
              const e = this.nameEnd(b, i + 1, last);
              if (e < 0) return false;
              i = e + 1;
              if (b[i] === COMMA) i++;
              else if (b[i] === RBRACKET) {
                i++;
                break;
              } else return false;
            }
          }
          cnamesEnd = i;
          break;
        }
        default:
          i = this.skipValue(b, i, last);
          if (i < 0) return false;
      }
      if (i === last) break;
      if (b[i] !== COMMA) return false;
      i++;
    }
    if ((seen & REQUIRED_KEYS) !== REQUIRED_KEYS) return false;
    if (outcome === POSITIVE ? nVals === 0 : nVals !== 0) return false;
    let sorted = true;
    for (let v = 0; v < nVals; v++) {
      const s = this.valueStarts[v]!;
      const e = this.valueEnds[v]!;
      if (!checked && (aaaa === 1 ? !isCanonicalIpv6(b, s, e, this.groups) : !isCanonicalIpv4(b, s, e)))
        return false;
      if (v > 0 && compareBytes(b, this.valueStarts[v - 1]!, this.valueEnds[v - 1]!, s, e) >= 0)
        sorted = false;
    }
    f.valsBuf = b;
    if (!sorted) {
      nVals = this.sortValues(b, nVals);
      f.valsBuf = this.sortedVals;
      valsStart = 0;
      valsEnd = this.sortedLength;
    }
    f.buf = b;
    f.nameStart = nameStart;
    f.nameEnd = nameEnd;
    f.nameHash = nameHash;
    f.aaaa = aaaa;
    f.time = time;
    f.outcome = outcome;
    f.valsStart = valsStart;
    f.valsEnd = valsEnd;
    f.nVals = nVals;
    f.cnamesStart = cnamesStart;
    f.cnamesEnd = cnamesEnd;
    return true;
  }

  /**
   * Writes the JSON text of the values sorted and without repeats (what parseObservationLine makes
   * of them) to sortedVals; returns how many remain.
   */
  private sortValues(b: Buffer, n: number): number {
    const starts = this.valueStarts;
    const ends = this.valueEnds;
    for (let i = 1; i < n; i++) {
      const s = starts[i]!;
      const e = ends[i]!;
      let j = i - 1;
      while (j >= 0 && compareBytes(b, starts[j]!, ends[j]!, s, e) > 0) {
        starts[j + 1] = starts[j]!;
        ends[j + 1] = ends[j]!;
        j--;
      }
      starts[j + 1] = s;
      ends[j + 1] = e;
    }
    const out = this.sortedVals;
    let p = 0;
    let kept = 0;
    out[p++] = LBRACKET;
    for (let i = 0; i < n; i++) {
      const s = starts[i]!;
      const e = ends[i]!;
      if (i > 0 && compareBytes(b, starts[i - 1]!, ends[i - 1]!, s, e) === 0) continue;
      if (kept++ > 0) out[p++] = COMMA;
      out[p++] = QUOTE;
      for (let k = s; k < e; k++) out[p++] = b[k]!;
      out[p++] = QUOTE;
    }
    out[p++] = RBRACKET;
    this.sortedLength = p;
    return kept;
  }

  /** Index of the closing quote of a plain string (printable ASCII, no escapes) opened before start, or -1. */
  private stringEnd(b: Buffer, start: number, last: number): number {
    for (let p = start; p < last; p++) {
      const c = b[p]!;
      if (c === QUOTE) return p;
      if (c === BACKSLASH || c < 0x20 || c > 0x7e) return -1;
    }
    return -1;
  }

  /**
   * Index of the closing quote of a name that FAST_NAME accepts as it is (labels of [a-z0-9_-],
   * 1 to 63 long, no hyphen at either end, at least two labels, at most 253 bytes), or -1. Leaves
   * the name's hashBytes() in this.hash.
   */
  private nameEnd(b: Buffer, start: number, last: number): number {
    let h = FNV_OFFSET;
    let label = 0;
    let labels = 1;
    let previous = 0;
    let p = start;
    for (; ; p++) {
      if (p >= last) return -1;
      const c = b[p]!;
      if (c === QUOTE) break;
      if (c === DOT) {
        if (label === 0 || previous === DASH) return -1;
        labels++;
        label = 0;
      } else if ((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === UNDERSCORE) {
        if (++label > 63) return -1;
      } else if (c === DASH) {
        if (label === 0 || ++label > 63) return -1;
      } else return -1;
      h = Math.imul(h ^ c, FNV_PRIME);
      previous = c;
    }
    if (label === 0 || previous === DASH || labels < 2 || p - start > 253) return -1;
    this.hash = h;
    return p;
  }

  /** The time in bytes [start, end) as epoch seconds, NaN if it is not one. */
  private time(b: Buffer, start: number, end: number): number {
    const length = end - start;
    if (length === this.timeLength) {
      let i = 0;
      while (i < length && b[start + i] === this.timeBytes[i]) i++;
      if (i === length) return this.timeValue;
    }
    const value = parseIsoToEpoch(b.toString('latin1', start, end));
    if (value === null) return NaN;
    if (length <= MAX_TIME_BYTES) {
      for (let i = 0; i < length; i++) this.timeBytes[i] = b[start + i]!;
      this.timeLength = length;
      this.timeValue = value;
    }
    return value;
  }

  /** Skips a string, number, true, false or null; -1 for anything else (or invalid JSON). */
  private skipValue(b: Buffer, i: number, last: number): number {
    const c = b[i]!;
    if (c === QUOTE) {
      const e = this.stringEnd(b, i + 1, last);
      return e < 0 ? -1 : e + 1;
    }
    if (c === DASH || (c >= 0x30 && c <= 0x39)) {
      let p = i;
      if (b[p] === DASH) p++;
      if (b[p] === 0x30) p++;
      else if (b[p]! >= 0x31 && b[p]! <= 0x39) while (p < last && b[p]! >= 0x30 && b[p]! <= 0x39) p++;
      else return -1;
      if (b[p] === DOT) {
        p++;
        if (!(b[p]! >= 0x30 && b[p]! <= 0x39)) return -1;
        while (p < last && b[p]! >= 0x30 && b[p]! <= 0x39) p++;
      }
      if (b[p] === 0x65 || b[p] === 0x45) {
        p++;
        if (b[p] === 0x2b || b[p] === DASH) p++;
        if (!(b[p]! >= 0x30 && b[p]! <= 0x39)) return -1;
        while (p < last && b[p]! >= 0x30 && b[p]! <= 0x39) p++;
      }
      return p;
    }
    for (const literal of LITERALS) {
      if (equalBytes(b, i, Math.min(literal.length, last - i), literal)) return i + literal.length;
    }
    return -1;
  }
}

const LITERALS = [Buffer.from('true'), Buffer.from('false'), Buffer.from('null')];

// ---------------------------------------------------------------------------------------------
// Chunks of lines: what the import's worker threads do

/** Int32 values per scanned record: flags, name start, end, hash, values start, end, CNAMEs start, end. */
export const RECORD_INTS = 8;
/** Record flags: bit 0 AAAA, bits 1-3 outcome code, then where the byte ranges are; nVals above bit 8. */
export const RECORD_VALS_IN_EXTRA = 16;
export const RECORD_ALL_IN_EXTRA = 32;

export interface ScannedChunk {
  /** The chunk's bytes (complete lines), handed back. */
  bytes: Uint8Array;
  /** RECORD_INTS per accepted line, in line order. */
  records: Int32Array;
  times: Float64Array;
  count: number;
  /** Bytes the records point into besides `bytes`: re-sorted values, lines parsed as strings. */
  extra: Uint8Array;
  /** Lines in the chunk, and lines read (not blank, not comments). */
  lines: number;
  read: number;
  rejectedCount: number;
  /** The first rejected lines; line = line number within the chunk (1-based). */
  rejected: Array<{ line: number; reason: string }>;
}

/** Buffers of a ScannedChunk handed back for reuse (fresh ArrayBuffers cost major GCs). */
export interface ChunkBuffers {
  records: Int32Array;
  times: Float64Array;
  extra: Uint8Array;
}

/** Growable output of scanChunk. */
class ChunkWriter {
  records: Int32Array;
  times: Float64Array;
  count = 0;
  extra: Uint8Array;
  extraUsed = 0;

  constructor(spare?: ChunkBuffers) {
    this.records = spare?.records ?? new Int32Array(RECORD_INTS * 8192);
    this.times = spare?.times ?? new Float64Array(this.records.length / RECORD_INTS);
    this.extra = spare?.extra ?? new Uint8Array(1 << 16);
  }

  /** Appends one record; its ranges are set by the caller in `records` at the returned offset. */
  add(time: number): number {
    if (this.count === this.times.length) {
      const records = new Int32Array(this.records.length * 2);
      records.set(this.records);
      this.records = records;
      const times = new Float64Array(this.times.length * 2);
      times.set(this.times);
      this.times = times;
    }
    this.times[this.count] = time;
    return this.count++ * RECORD_INTS;
  }

  /** Room for n more bytes in `extra`; returns where they go. */
  reserve(n: number): number {
    if (this.extraUsed + n > this.extra.length) {
      const extra = new Uint8Array(Math.max(this.extra.length * 2, this.extraUsed + n));
      extra.set(this.extra.subarray(0, this.extraUsed));
      this.extra = extra;
    }
    const at = this.extraUsed;
    this.extraUsed += n;
    return at;
  }

  /** Appends a string as UTF-8; returns [start, end). */
  text(s: string): [number, number] {
    const at = this.reserve(s.length * 3);
    const n = Buffer.from(this.extra.buffer, this.extra.byteOffset, this.extra.length).write(s, at, 'utf8');
    this.extraUsed = at + n;
    return [at, at + n];
  }
}

const chunkScanner = new ObservationLineScanner();
const chunkFields = new ObservationFields();

/**
 * Scans the lines of a chunk (complete lines; the last one may lack its newline): lines in the
 * common form with the byte scanner, the others with parseObservationLine. Pure, so it runs in a
 * worker thread as well as in the importing thread.
 */
export function scanChunk(bytes: Uint8Array, maxRejected: number, spare?: ChunkBuffers): ScannedChunk {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const out = new ChunkWriter(spare);
  const f = chunkFields;
  const rejected: ScannedChunk['rejected'] = [];
  let rejectedCount = 0;
  let read = 0;
  let line = 0;
  for (let start = 0; start < b.length;) {
    let newline = b.indexOf(10, start);
    if (newline < 0) newline = b.length;
    line++;
    const end = newline > start && b[newline - 1] === 13 ? newline - 1 : newline;
    if (end > start) {
      if (chunkScanner.scan(b, start, end, f)) {
        read++;
        const o = out.add(f.time);
        let flags = f.aaaa | (f.outcome << 1) | (f.nVals << 8);
        let valsStart = f.valsStart;
        let valsEnd = f.valsEnd;
        if (f.valsBuf !== b) {
          // Values listed in another order: their sorted text goes to extra.
          flags |= RECORD_VALS_IN_EXTRA;
          const n = valsEnd - valsStart;
          const at = out.reserve(n);
          out.extra.set(f.valsBuf.subarray(valsStart, valsEnd), at);
          valsStart = at;
          valsEnd = at + n;
        }
        const r = out.records;
        r[o] = flags;
        r[o + 1] = f.nameStart;
        r[o + 2] = f.nameEnd;
        r[o + 3] = f.nameHash;
        r[o + 4] = valsStart;
        r[o + 5] = valsEnd;
        r[o + 6] = f.cnamesStart;
        r[o + 7] = f.cnamesEnd;
      } else {
        const text = b.toString('utf8', start, end);
        if (!text.trimStart().startsWith('#')) {
          read++;
          const parsed = parseObservationLine(text);
          if (parsed.ok) {
            const rec = parsed.record;
            const [nameStart, nameEnd] = out.text(rec.name);
            const [valsStart, valsEnd] = out.text(JSON.stringify(rec.values));
            const [cnamesStart, cnamesEnd] = out.text(JSON.stringify(rec.cnames));
            const o = out.add(rec.time);
            const r = out.records;
            r[o] =
              (rec.type === 'AAAA' ? 1 : 0) |
              (OUTCOME_CODES.get(rec.outcome)! << 1) |
              RECORD_ALL_IN_EXTRA |
              (rec.values.length << 8);
            r[o + 1] = nameStart;
            r[o + 2] = nameEnd;
            r[o + 3] = hashBytes(out.extra, nameStart, nameEnd);
            r[o + 4] = valsStart;
            r[o + 5] = valsEnd;
            r[o + 6] = cnamesStart;
            r[o + 7] = cnamesEnd;
          } else {
            rejectedCount++;
            if (rejected.length < maxRejected) rejected.push({ line, reason: parsed.reason });
          }
        }
      }
    }
    start = newline + 1;
  }
  return {
    bytes,
    records: out.records,
    times: out.times,
    count: out.count,
    extra: out.extra,
    lines: line,
    read,
    rejectedCount,
    rejected,
  };
}

const chunkFieldsApplied = new ObservationFields();

/** Applies the records of a scanned chunk, in line order. */
export function applyScannedChunk(machine: DnsStateMachine, c: ScannedChunk, counts: ApplyCounts): void {
  const bytes = Buffer.from(c.bytes.buffer, c.bytes.byteOffset, c.bytes.length);
  const extra = Buffer.from(c.extra.buffer, c.extra.byteOffset, c.extra.length);
  const f = chunkFieldsApplied;
  const r = c.records;
  for (let i = 0; i < c.count; i++) {
    const o = i * RECORD_INTS;
    const flags = r[o]!;
    f.buf = flags & RECORD_ALL_IN_EXTRA ? extra : bytes;
    f.valsBuf = flags & (RECORD_VALS_IN_EXTRA | RECORD_ALL_IN_EXTRA) ? extra : bytes;
    f.aaaa = flags & 1;
    f.outcome = (flags >> 1) & 7;
    f.nVals = flags >>> 8;
    f.nameStart = r[o + 1]!;
    f.nameEnd = r[o + 2]!;
    f.nameHash = r[o + 3]!;
    f.valsStart = r[o + 4]!;
    f.valsEnd = r[o + 5]!;
    f.cnamesStart = r[o + 6]!;
    f.cnamesEnd = r[o + 7]!;
    f.time = c.times[i]!;
    machine.apply(f, counts);
  }
}

/** The ArrayBuffers of a chunk result, to transfer between threads. */
export function chunkTransferList(c: ScannedChunk): ArrayBuffer[] {
  return [c.bytes.buffer as ArrayBuffer, ...spareTransferList(c)];
}

export function spareTransferList(c: ChunkBuffers): ArrayBuffer[] {
  return [c.records.buffer, c.times.buffer, c.extra.buffer] as ArrayBuffer[];
}

// ---------------------------------------------------------------------------------------------
// Applying parsed observations

/**
 * Applies parsed observations through the state machine (loaded from the state database when
 * constructed). Nothing is written until save().
 */
export class ObservationApplier {
  readonly machine: DnsStateMachine;

  constructor(db: StateDb) {
    this.machine = new DnsStateMachine(db);
  }

  /** Applies records in order. Records for one name and type must come in time order. */
  apply(records: ObservationRecord[], counts: ApplyCounts = emptyCounts()): ApplyCounts {
    for (const r of records) this.machine.applyRecord(r, counts);
    return counts;
  }

  /** Writes everything applied since the last save in one transaction. */
  save(): SaveResult {
    return this.machine.save();
  }
}
