/**
 * The byte scanner of observation lines: reads the common form (compact JSON, lowercase names,
 * canonical sorted addresses, no escapes) without creating strings, and gives up on anything
 * else, which then goes to parseObservationLine (line-parser.ts). It accepts a line only when
 * parseObservationLine would accept it with the same record.
 */
import { OUTCOMES } from '../../shared/vocabulary.js';
import { parseIsoToEpoch } from '../../shared/time.js';
import { FNV_OFFSET, FNV_PRIME } from '../../shared/hash.js';
import type { ObservationFields } from '../dns-state/observation-fields.js';
import { OUTCOME_CODES, POSITIVE } from '../dns-state/outcome-codes.js';
import { ipv4End, ipv6End, isCanonicalIpv4, isCanonicalIpv6 } from './address-bytes.js';
import {
  BACKSLASH,
  COLON,
  COMMA,
  compareBytes,
  DASH,
  DOT,
  equalBytes,
  LBRACE,
  LBRACKET,
  QUOTE,
  RBRACE,
  RBRACKET,
  UNDERSCORE,
} from './json-bytes.js';

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
