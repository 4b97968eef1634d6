/**
 * Many short texts as bytes in one buffer (newline-separated) with their offsets: a fraction of
 * the memory of as many strings, and shareable between threads.
 */
export class PackedText {
  readonly length: number;
  /** Text i is bytes[offsets[i], offsets[i + 1] - 1) (the last one is followed by no newline). */
  readonly offsets: Uint32Array;
  /** No byte above 127: read back without UTF-8 decoding. */
  private readonly ascii: boolean;

  constructor(
    readonly bytes: Buffer,
    ascii?: boolean,
  ) {
    let n = 0;
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) n++;
    this.length = bytes.length === 0 ? 0 : n + 1;
    const offsets = new Uint32Array(this.length + 1);
    let k = 1;
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) offsets[k++] = i + 1;
    offsets[this.length] = bytes.length + 1;
    this.offsets = offsets;
    if (ascii === undefined) {
      let all = 0;
      for (let i = 0; i < bytes.length; i++) all |= bytes[i]!;
      ascii = all < 128;
    }
    this.ascii = ascii;
  }

  /** Texts without newlines, joined into shared memory. */
  static of(texts: string[]): PackedText {
    const text = texts.join('\n');
    const bytes = Buffer.from(new SharedArrayBuffer(Buffer.byteLength(text)));
    const written = bytes.write(text, 0, 'utf8');
    return new PackedText(bytes, written === text.length);
  }

  /** Bytes of text i. */
  byteLength(i: number): number {
    return this.offsets[i + 1]! - 1 - this.offsets[i]!;
  }

  /** Copies the bytes of text i into target at `at`; returns the position after them. */
  copyTo(i: number, target: Uint8Array, at: number): number {
    const { bytes } = this;
    const end = this.offsets[i + 1]! - 1;
    for (let k = this.offsets[i]!; k < end; k++) target[at++] = bytes[k]!;
    return at;
  }

  /** Whether JSON.stringify leaves every text as it is, between quotes (printable ASCII, no " or \\). */
  isJsonSafe(): boolean {
    const { bytes } = this;
    for (let k = 0; k < bytes.length; k++) {
      const c = bytes[k]!;
      if (c === 10) continue; // the separator
      if (c < 32 || c > 126 || c === 34 || c === 92) return false;
    }
    return true;
  }

  get(i: number): string {
    const start = this.offsets[i]!;
    const end = this.offsets[i + 1]! - 1;
    return this.ascii
      ? (this.bytes as unknown as { latin1Slice(s: number, e: number): string }).latin1Slice(start, end)
      : this.bytes.toString('utf8', start, end);
  }
}
