/**
 * Numbers for the addresses of the DNS state, found without making a string of each: canonical
 * IPv4 addresses by their 32-bit value, other texts by a hash of their characters.
 */
import { hashText } from '../../../shared/hash.js';

/**
 * The value of a canonical dotted-quad IPv4 address in text[start, end) (no leading zeros, each
 * part at most 255), or -1 for any other text.
 */
export function canonicalIpv4(text: string, start: number, end: number): number {
  let value = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (digits > 0 && part === 0) return -1; // leading zero
      part = part * 10 + (c - 48);
      if (++digits > 3) return -1;
    } else if (c === 46) {
      if (digits === 0 || part > 255 || ++dots > 3) return -1;
      value = value * 256 + part;
      part = 0;
      digits = 0;
    } else return -1;
  }
  if (digits === 0 || part > 255 || dots !== 3) return -1;
  return value * 256 + part;
}

/** Open addressing: a power-of-two table of 32-bit keys and the numbers stored under them. */
class IntTable {
  bits = 16;
  keys = new Int32Array(1 << 16);
  /** -1: empty slot. */
  values = new Int32Array(1 << 16).fill(-1);
  used = 0;

  /** First slot to probe for a key. */
  slot(key: number): number {
    return Math.imul(key, 0x9e3779b1) >>> (32 - this.bits);
  }

  /** Stores at an empty slot found by probing; grows the table past half full. */
  set(slot: number, key: number, value: number): void {
    this.keys[slot] = key;
    this.values[slot] = value;
    if (++this.used * 2 <= this.keys.length) return;
    const { keys, values } = this;
    this.bits++;
    this.keys = new Int32Array(1 << this.bits);
    this.values = new Int32Array(1 << this.bits).fill(-1);
    const mask = this.keys.length - 1;
    for (let i = 0; i < keys.length; i++) {
      if (values[i] === -1) continue;
      let h = this.slot(keys[i]!);
      while (this.values[h] !== -1) h = (h + 1) & mask;
      this.keys[h] = keys[i]!;
      this.values[h] = values[i]!;
    }
  }
}

/**
 * Numbers for address texts, given out in first-seen order, found without making a string of the
 * text looked up: canonical IPv4 addresses by their 32-bit value, other texts (IPv6) by a hash of
 * their characters and a comparison with the stored text.
 */
export class ValueNumbers {
  private ipv4Table = new IntTable();
  private otherTable = new IntTable();
  /** Per number: the IPv4 value, or -1 - k for otherTexts[k]. */
  private ipv4: Float64Array = new Float64Array(1 << 16);
  private otherTexts: string[] = [];
  /** Per other text: its number. */
  private otherIds: number[] = [];
  count = 0;

  of(text: string): number {
    return this.inText(text, 0, text.length);
  }

  /** The number of text[start, end). */
  inText(text: string, start: number, end: number): number {
    const ip = canonicalIpv4(text, start, end);
    if (ip >= 0) {
      const table = this.ipv4Table;
      const key = ip | 0;
      for (let h = table.slot(key); ; h = (h + 1) & (table.keys.length - 1)) {
        const id = table.values[h]!;
        if (id === -1) {
          const added = this.add(ip);
          table.set(h, key, added);
          return added;
        }
        if (table.keys[h] === key) return id;
      }
    }
    const hash = hashText(text, start, end);
    const table = this.otherTable;
    const length = end - start;
    for (let h = table.slot(hash); ; h = (h + 1) & (table.keys.length - 1)) {
      const k = table.values[h]!;
      if (k === -1) {
        // A copy, not a slice: a slice would keep the whole chunk of text it is in alive.
        const copy =
          start === 0 && end === text.length ? text : Buffer.from(text.slice(start, end)).toString();
        const added = this.add(-1 - this.otherTexts.length);
        table.set(h, hash, this.otherTexts.length);
        this.otherTexts.push(copy);
        this.otherIds.push(added);
        return added;
      }
      if (table.keys[h] !== hash) continue;
      const stored = this.otherTexts[k]!;
      if (stored.length !== length) continue;
      let same = true;
      for (let i = 0; i < length; i++) {
        if (stored.charCodeAt(i) !== text.charCodeAt(start + i)) {
          same = false;
          break;
        }
      }
      if (same) return this.otherIds[k]!;
    }
  }

  private add(ip: number): number {
    if (this.count === this.ipv4.length) {
      const bigger = new Float64Array(this.count * 2);
      bigger.set(this.ipv4);
      this.ipv4 = bigger;
    }
    this.ipv4[this.count] = ip;
    return this.count++;
  }

  /** The text of each number, in number order. */
  texts(): string[] {
    const texts = new Array<string>(this.count);
    for (let id = 0; id < this.count; id++) {
      const ip = this.ipv4[id]!;
      texts[id] =
        ip < 0
          ? this.otherTexts[-1 - ip]!
          : `${Math.floor(ip / 16777216)}.${(ip >>> 16) & 255}.${(ip >>> 8) & 255}.${ip & 255}`;
    }
    return texts;
  }

  clear(): void {
    this.ipv4Table = new IntTable();
    this.otherTable = new IntTable();
    this.ipv4 = new Float64Array(0);
    this.otherTexts = [];
    this.otherIds = [];
  }
}
