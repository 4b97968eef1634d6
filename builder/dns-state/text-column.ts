/**
 * The JSON texts of the DNS state (vals, firsts, cnames: one per key) as UTF-8 bytes in arenas
 * in shared memory, and the view of one column that save workers read.
 */
import { asciiText, grow, sharedBytes, sharedU32 } from './memory.js';

/** The empty JSON array, shared by every key without addresses or CNAMEs. */
export const EMPTY_JSON = '[]';

/** A TextColumn's storage: the text of key k is bytes [offsets[k], offsets[k] + lengths[k]). */
export interface TextView {
  bytes: Buffer;
  offsets: Uint32Array;
  lengths: Uint32Array;
  /** No byte above 127. */
  ascii: boolean;
}

/** The text of key k (the empty array when it has none). */
export function textAt(t: TextView, k: number): string {
  const length = t.lengths[k]!;
  if (length === 0) return EMPTY_JSON;
  const offset = t.offsets[k]!;
  return t.ascii
    ? asciiText(t.bytes, offset, offset + length)
    : t.bytes.toString('utf8', offset, offset + length);
}

/**
 * One JSON text per key (vals, firsts or cnames) as UTF-8 bytes in an arena: millions of small
 * strings would cost 16 bytes of header each and garbage-collector time (every major GC marks
 * them all). Length 0 stands for the empty array. A replaced text leaves its bytes behind until
 * the arena is compacted, which happens when more than half of it is such garbage.
 */
export class TextColumn {
  private bytes = sharedBytes(1 << 16);
  private used = 0;
  private garbage = 0;
  private offsets = sharedU32(2048);
  private lengths = sharedU32(2048);
  /** No byte above 127 was ever stored: texts are read back without UTF-8 decoding. */
  private ascii = true;

  /** Room for keys [0, keys). */
  ensure(keys: number): void {
    if (keys <= this.offsets.length) return;
    const size = Math.max(keys, this.offsets.length * 2);
    this.offsets = grow(this.offsets, sharedU32(size));
    this.lengths = grow(this.lengths, sharedU32(size));
  }

  /** The column as it is now (what save workers read). */
  view(): TextView {
    return { bytes: this.bytes, offsets: this.offsets, lengths: this.lengths, ascii: this.ascii };
  }

  isEmpty(k: number): boolean {
    return this.lengths[k] === 0;
  }

  /** Whether key k holds the text in bytes [start, end) of b (2 bytes or less: the empty array). */
  equals(k: number, b: Uint8Array, start: number, end: number): boolean {
    const n = end - start;
    const length = this.lengths[k]!;
    if (n <= EMPTY_JSON.length) return length === 0;
    if (length !== n) return false;
    const offset = this.offsets[k]!;
    const bytes = this.bytes;
    for (let i = 0; i < n; i++) if (bytes[offset + i] !== b[start + i]) return false;
    return true;
  }

  /** Sets key k to the text in bytes [start, end) of b (2 bytes or less: the empty array). */
  set(k: number, b: Uint8Array, start: number, end: number): void {
    this.garbage += this.lengths[k]!;
    const n = end - start;
    if (n <= EMPTY_JSON.length) {
      this.lengths[k] = 0;
      return;
    }
    const offset = this.reserve(n);
    const bytes = this.bytes;
    let all = 0;
    for (let i = 0; i < n; i++) all |= bytes[offset + i] = b[start + i]!;
    if (all > 127) this.ascii = false;
    this.used = offset + n;
    this.offsets[k] = offset;
    this.lengths[k] = n;
  }

  setText(k: number, text: string): void {
    this.garbage += this.lengths[k]!;
    if (text === EMPTY_JSON) {
      this.lengths[k] = 0;
      return;
    }
    const offset = this.reserve(text.length * 3);
    const n = this.bytes.write(text, offset, 'utf8');
    if (n !== text.length) this.ascii = false;
    this.used = offset + n;
    this.offsets[k] = offset;
    this.lengths[k] = n;
  }

  text(k: number): string {
    return textAt(this.view(), k);
  }

  /**
   * Sets keys[0..count) to the newline-separated texts of `text` (an empty one: the empty array,
   * as the load query writes it); throws unless there are exactly count of them.
   */
  load(text: string, keys: Int32Array, count: number): void {
    const start = this.reserve(text.length * 3);
    const bytes = this.bytes;
    const end = start + bytes.write(text, start, 'utf8');
    if (end - start !== text.length) this.ascii = false;
    this.used = end;
    let i = 0;
    let from = start;
    for (let p = start; p <= end; p++) {
      if (p < end && bytes[p] !== 10) continue;
      if (i === count) break;
      const k = keys[i++]!;
      this.garbage += this.lengths[k]!;
      this.offsets[k] = from;
      this.lengths[k] = p - from;
      from = p + 1;
    }
    if (i !== count || from !== end + 1) throw new Error('dns_state: a JSON text spans lines');
  }

  /** Where n more bytes go (this.used is moved past them by the caller). */
  private reserve(n: number): number {
    if (this.used + n > this.bytes.length) {
      if (this.garbage * 2 > this.used) this.compact(n);
      if (this.used + n > this.bytes.length) {
        const bytes = sharedBytes(Math.max(Math.ceil(this.bytes.length * 1.5), this.used + n));
        this.bytes.copy(bytes, 0, 0, this.used);
        this.bytes = bytes;
      }
    }
    return this.used;
  }

  /** Copies the live texts to a new arena with room for n more bytes. */
  private compact(n: number): void {
    const live = this.used - this.garbage;
    const bytes = sharedBytes(Math.max(1 << 16, Math.ceil((live + n) * 1.25)));
    let used = 0;
    for (let k = 0; k < this.lengths.length; k++) {
      const length = this.lengths[k]!;
      if (length === 0) continue;
      this.bytes.copy(bytes, used, this.offsets[k]!, this.offsets[k]! + length);
      this.offsets[k] = used;
      used += length;
    }
    this.bytes = bytes;
    this.used = used;
    this.garbage = 0;
  }
}
