/**
 * The names of the DNS state as UTF-8 bytes in one arena, found by an open-addressing hash table:
 * lines are looked up without creating strings, and no JavaScript object per name.
 */
import { asciiText, grow } from './memory.js';
import { FNV_OFFSET, FNV_PRIME } from '../../shared/hash.js';

/** Bytes of a name that order new names before they get their ids (a multiple of 4). */
const SORT_PREFIX = 12;

/** Names as UTF-8 bytes in one arena, found by an open-addressing hash table (linear probing). */
export class NameTable {
  count = 0;
  private arena = Buffer.allocUnsafe(1 << 16);
  private used = 0;
  private offsets = new Uint32Array(1024);
  private lengths = new Uint32Array(1024);
  private hashes = new Int32Array(1024);
  /** index + 1 of the name in each slot; 0 = empty. */
  private slots = new Int32Array(2048);
  private mask = 2047;
  /** No byte above 127 in any name: names are read back without UTF-8 decoding. */
  private ascii = true;

  /** Index of the name in bytes [start, end) with hash h, or -1. */
  find(b: Uint8Array, start: number, end: number, h: number): number {
    const length = end - start;
    const arena = this.arena;
    for (let p = h & this.mask; ; p = (p + 1) & this.mask) {
      const slot = this.slots[p]!;
      if (slot === 0) return -1;
      const index = slot - 1;
      if (this.hashes[index] !== h || this.lengths[index] !== length) continue;
      const offset = this.offsets[index]!;
      let i = 0;
      while (i < length && arena[offset + i] === b[start + i]) i++;
      if (i === length) return index;
    }
  }

  /** Adds a name known to be absent; returns its index. */
  add(b: Uint8Array, start: number, end: number, h: number): number {
    const length = end - start;
    if (this.used + length > this.arena.length) {
      const arena = Buffer.allocUnsafe(Math.max(this.arena.length * 2, this.used + length));
      this.arena.copy(arena, 0, 0, this.used);
      this.arena = arena;
    }
    const arena = this.arena;
    const offset = this.used;
    let all = 0;
    for (let i = 0; i < length; i++) all |= arena[offset + i] = b[start + i]!;
    if (all > 127) this.ascii = false;
    this.used += length;
    return this.register(offset, length, h);
  }

  /**
   * Indexes from..count-1 ordered by the first SORT_PREFIX bytes of their names (byte order, as
   * SQLite's BINARY collation; names sharing that prefix keep their order). Inserting names in
   * this order only appends to dns_name's UNIQUE index, or nearly: three times cheaper than
   * inserting them in the order they were seen. LSD radix sort on 16-bit digits of prefix words
   * read once in arena order: cache-friendly, unlike comparisons of names spread over the arena.
   */
  sortedByPrefix(from: number): Int32Array {
    const n = this.count - from;
    const words = SORT_PREFIX / 4;
    let keys = new Uint32Array(n * words);
    const arena = this.arena;
    for (let i = 0; i < n; i++) {
      const offset = this.offsets[from + i]!;
      const length = this.lengths[from + i]!;
      for (let w = 0; w < words; w++) {
        let word = 0;
        for (let j = w * 4; j < w * 4 + 4; j++) word = word * 256 + (j < length ? arena[offset + j]! : 0);
        keys[i * words + w] = word;
      }
    }
    let order = new Int32Array(n);
    for (let i = 0; i < n; i++) order[i] = from + i;
    let nextKeys = new Uint32Array(n * words);
    let nextOrder = new Int32Array(n);
    const counts = new Int32Array(65537);
    for (let pass = words * 2 - 1; pass >= 0; pass--) {
      const w = pass >> 1;
      const shift = pass & 1 ? 0 : 16;
      counts.fill(0);
      for (let i = 0; i < n; i++) counts[((keys[i * words + w]! >>> shift) & 0xffff) + 1]!++;
      if (counts[((keys[w]! >>> shift) & 0xffff) + 1] === n) continue; // one digit: nothing moves
      for (let d = 1; d <= 65536; d++) counts[d]! += counts[d - 1]!;
      for (let i = 0; i < n; i++) {
        const at = counts[(keys[i * words + w]! >>> shift) & 0xffff]!++;
        nextOrder[at] = order[i]!;
        for (let x = 0; x < words; x++) nextKeys[at * words + x] = keys[i * words + x]!;
      }
      [keys, nextKeys] = [nextKeys, keys];
      [order, nextOrder] = [nextOrder, order];
    }
    return order;
  }

  /** Adds names (absent, none empty) given as one text, newline-separated; returns how many. */
  addMany(text: string): number {
    const room = text.length * 3;
    if (this.used + room > this.arena.length) {
      const arena = Buffer.allocUnsafe(Math.max(this.arena.length * 2, this.used + room));
      this.arena.copy(arena, 0, 0, this.used);
      this.arena = arena;
    }
    const arena = this.arena;
    const start = this.used;
    const end = start + arena.write(text, start, 'utf8');
    if (end - start !== text.length) this.ascii = false;
    let added = 0;
    let h = FNV_OFFSET;
    let nameStart = start;
    for (let i = start; i <= end; i++) {
      if (i === end || arena[i] === 10) {
        this.register(nameStart, i - nameStart, h);
        added++;
        h = FNV_OFFSET;
        nameStart = i + 1;
      } else h = Math.imul(h ^ arena[i]!, FNV_PRIME);
    }
    this.used = end;
    return added;
  }

  name(index: number): string {
    const offset = this.offsets[index]!;
    const end = offset + this.lengths[index]!;
    return this.ascii ? asciiText(this.arena, offset, end) : this.arena.toString('utf8', offset, end);
  }

  private register(offset: number, length: number, h: number): number {
    const index = this.count++;
    if (index >= this.offsets.length) {
      const size = this.offsets.length * 2;
      this.offsets = grow(this.offsets, new Uint32Array(size));
      this.lengths = grow(this.lengths, new Uint32Array(size));
      this.hashes = grow(this.hashes, new Int32Array(size));
    }
    this.offsets[index] = offset;
    this.lengths[index] = length;
    this.hashes[index] = h;
    if (this.count * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    else this.place(index);
    return index;
  }

  private place(index: number): void {
    let p = this.hashes[index]! & this.mask;
    while (this.slots[p] !== 0) p = (p + 1) & this.mask;
    this.slots[p] = index + 1;
  }

  private rehash(size: number): void {
    this.slots = new Int32Array(size);
    this.mask = size - 1;
    for (let i = 0; i < this.count; i++) this.place(i);
  }
}
