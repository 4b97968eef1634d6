/**
 * A MaxMind DB (format 2.0) writer: https://maxmind.github.io/MaxMind-DB/. No maintained npm
 * package writes the format (docs/decisions/0021-bulk-mmdb-diff.md), so this one does:
 *
 * - an IPv6 search tree (ip_version 6) of nodes with two records each, record size 24, 28 or 32
 *   bits (the smallest that fits); IPv4 lives in ::/96 as MaxMind's own databases have it, and
 *   ::ffff:0:0/96 is an alias of that subtree (its record points at the IPv4 root node);
 * - a data section of records, every value written once: a string, map or list seen before is a
 *   pointer to its first copy, and a whole record seen before is pointed to from the tree directly;
 * - the metadata map after the "\xAB\xCD\xEFMaxMind.com" marker.
 *
 * Networks must not overlap; they are inserted as 128-bit addresses (four 32-bit words) and a
 * prefix length.
 */

export type MmdbValue = string | number | boolean | MmdbValue[] | { [key: string]: MmdbValue };
export type MmdbMap = { [key: string]: MmdbValue };

const TYPE = {
  pointer: 1,
  string: 2,
  double: 3,
  uint16: 5,
  uint32: 6,
  map: 7,
  uint64: 9,
  array: 11,
  boolean: 14,
} as const;

const METADATA_MARKER = Buffer.from('abcdef4d61784d696e642e636f6d', 'hex');

/** A growable byte buffer. */
class Bytes {
  buf = Buffer.alloc(1 << 16);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const bigger = Buffer.alloc(size);
    this.buf.copy(bigger, 0, 0, this.length);
    this.buf = bigger;
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.length++] = b;
  }

  bytes(b: Buffer): void {
    this.room(b.length);
    b.copy(this.buf, this.length);
    this.length += b.length;
  }

  done(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

/** Encodes values; with `dedupe`, a string, map or list written before becomes a pointer to it. */
class Encoder {
  readonly out = new Bytes();
  private readonly seen = new Map<string, number>();

  constructor(private readonly dedupe: boolean) {}

  private control(type: number, size: number): void {
    const out = this.out;
    const first = type <= 7 ? type << 5 : 0;
    const ext = type > 7 ? [type - 7] : [];
    if (size < 29) {
      out.byte(first | size);
      ext.forEach((b) => out.byte(b));
    } else if (size < 29 + 256) {
      out.byte(first | 29);
      ext.forEach((b) => out.byte(b));
      out.byte(size - 29);
    } else if (size < 285 + 65536) {
      out.byte(first | 30);
      ext.forEach((b) => out.byte(b));
      const s = size - 285;
      out.byte(s >> 8);
      out.byte(s & 0xff);
    } else {
      out.byte(first | 31);
      ext.forEach((b) => out.byte(b));
      const s = size - 65821;
      out.byte((s >> 16) & 0xff);
      out.byte((s >> 8) & 0xff);
      out.byte(s & 0xff);
    }
  }

  private pointer(offset: number): void {
    const out = this.out;
    const p = TYPE.pointer << 5;
    if (offset < 2048) {
      out.byte(p | (offset >> 8));
      out.byte(offset & 0xff);
    } else if (offset < 2048 + (1 << 19)) {
      const v = offset - 2048;
      out.byte(p | (1 << 3) | (v >> 16));
      out.byte((v >> 8) & 0xff);
      out.byte(v & 0xff);
    } else if (offset < 526336 + 2 ** 27) {
      const v = offset - 526336;
      out.byte(p | (2 << 3) | Math.floor(v / 2 ** 24));
      out.byte((v >> 16) & 0xff);
      out.byte((v >> 8) & 0xff);
      out.byte(v & 0xff);
    } else {
      out.byte(p | (3 << 3));
      const b = Buffer.alloc(4);
      b.writeUInt32BE(offset);
      out.bytes(b);
    }
  }

  private unsigned(type: number, value: bigint | number, maxBytes: number): void {
    const bytes: number[] = [];
    let v = BigInt(value);
    while (v > 0n) {
      bytes.unshift(Number(v & 0xffn));
      v >>= 8n;
    }
    if (bytes.length > maxBytes) throw new RangeError(`${value} does not fit ${maxBytes} bytes`);
    this.control(type, bytes.length);
    bytes.forEach((b) => this.out.byte(b));
  }

  /** The header of a map of `pairs` key/value pairs (which follow). */
  mapHeader(pairs: number): void {
    this.control(TYPE.map, pairs);
  }

  uint16(value: number): void {
    this.unsigned(TYPE.uint16, value, 2);
  }

  uint64(value: number | bigint): void {
    this.unsigned(TYPE.uint64, value, 8);
  }

  /** Writes `value` here (a pointer where dedupe finds an earlier copy). */
  value(value: MmdbValue): void {
    if (typeof value === 'boolean') return this.control(TYPE.boolean, value ? 1 : 0);
    if (typeof value === 'number') {
      if (Number.isInteger(value) && value >= 0 && value <= 0xffffffff)
        return this.unsigned(TYPE.uint32, value, 4);
      this.control(TYPE.double, 8);
      const b = Buffer.alloc(8);
      b.writeDoubleBE(value);
      return this.out.bytes(b);
    }
    const key = this.dedupe ? dedupeKey(value) : null;
    if (key !== null) {
      const at = this.seen.get(key);
      if (at !== undefined) return this.pointer(at);
      this.seen.set(key, this.out.length);
    }
    if (typeof value === 'string') {
      const b = Buffer.from(value, 'utf8');
      this.control(TYPE.string, b.length);
      return this.out.bytes(b);
    }
    if (Array.isArray(value)) {
      this.control(TYPE.array, value.length);
      for (const item of value) this.value(item);
      return;
    }
    const entries = Object.entries(value);
    this.control(TYPE.map, entries.length);
    for (const [k, v] of entries) {
      this.value(k);
      this.value(v);
    }
  }

  /** The offset of `record` in the data section: an earlier identical record's, or a new one. */
  record(record: MmdbMap): number {
    const key = dedupeKey(record)!;
    const at = this.seen.get(key);
    if (at !== undefined) return at;
    const offset = this.out.length;
    this.value(record);
    return offset;
  }
}

/** The dedupe key of a value worth a pointer (a pointer costs 2 to 5 bytes), or null. */
function dedupeKey(value: MmdbValue): string | null {
  if (typeof value === 'string') return value.length >= 3 ? `s${value}` : null;
  if (typeof value === 'object') return `j${JSON.stringify(value)}`;
  return null;
}

export interface MmdbMetadata {
  databaseType: string;
  languages: string[];
  description: Record<string, string>;
  /** Epoch seconds. */
  buildEpoch: number;
  /** Further metadata keys (readers ignore keys they do not know). */
  extra?: MmdbMap;
}

/** The search tree as two records per node; a child is a node (>= 0), EMPTY, or data (-offset - 2). */
const EMPTY = -1;

export class MmdbWriter {
  private records = new Int32Array(1 << 16);
  private nodes = 1;
  private readonly data = new Encoder(true);
  networks = 0;

  private newNode(): number {
    if ((this.nodes + 1) * 2 > this.records.length) {
      const bigger = new Int32Array(this.records.length * 2);
      bigger.set(this.records);
      this.records = bigger;
    }
    this.records[this.nodes * 2] = EMPTY;
    this.records[this.nodes * 2 + 1] = EMPTY;
    return this.nodes++;
  }

  constructor() {
    this.records[0] = EMPTY;
    this.records[1] = EMPTY;
  }

  /** The node at the end of the first `depth` bits of `words`, creating nodes on the way. */
  private nodeAt(words: ArrayLike<number>, depth: number): number {
    let node = 0;
    for (let i = 0; i < depth; i++) {
      const slot = node * 2 + bit(words, i);
      let child = this.records[slot]!;
      if (child === EMPTY) {
        child = this.newNode();
        this.records[slot] = child;
      } else if (child < 0) {
        throw new Error(`network overlaps an earlier one at bit ${i}`);
      }
      node = child;
    }
    return node;
  }

  /** Inserts the network `words`/`prefixLength` (1..128) with its record. */
  insert(words: ArrayLike<number>, prefixLength: number, record: MmdbMap): void {
    const offset = this.data.record(record);
    const node = this.nodeAt(words, prefixLength - 1);
    const slot = node * 2 + bit(words, prefixLength - 1);
    if (this.records[slot] !== EMPTY) throw new Error('network overlaps an earlier one');
    this.records[slot] = -offset - 2;
    this.networks++;
  }

  /** Points ::ffff:0:0/96 at the IPv4 subtree (::/96), as MaxMind's databases do. */
  aliasIpv4Mapped(): void {
    const ipv4Root = this.nodeAt([0, 0, 0, 0], 96);
    const mapped = [0, 0, 0xffff, 0];
    const node = this.nodeAt(mapped, 95);
    const slot = node * 2 + bit(mapped, 95);
    if (this.records[slot] !== EMPTY) throw new Error('::ffff:0:0/96 already holds data');
    this.records[slot] = ipv4Root;
  }

  /** The file's bytes. */
  build(metadata: MmdbMetadata): Buffer {
    this.nodeAt([0, 0, 0, 0], 96); // the IPv4 root exists even without IPv4 networks
    const nodeCount = this.nodes;
    const data = this.data.out.done();
    const max = nodeCount + 16 + data.length;
    const recordSize = max < 2 ** 24 ? 24 : max < 2 ** 28 ? 28 : 32;
    const nodeBytes = recordSize / 4;
    const tree = Buffer.alloc(nodeCount * nodeBytes);
    const valueOf = (child: number) =>
      child >= 0 ? child : child === EMPTY ? nodeCount : nodeCount + 16 + (-child - 2);
    for (let n = 0; n < nodeCount; n++) {
      const left = valueOf(this.records[n * 2]!);
      const right = valueOf(this.records[n * 2 + 1]!);
      const at = n * nodeBytes;
      if (recordSize === 24) {
        tree.writeUIntBE(left, at, 3);
        tree.writeUIntBE(right, at + 3, 3);
      } else if (recordSize === 28) {
        tree.writeUIntBE(left & 0xffffff, at, 3);
        tree[at + 3] = ((left >>> 24) << 4) | (right >>> 24);
        tree.writeUIntBE(right & 0xffffff, at + 4, 3);
      } else {
        tree.writeUInt32BE(left, at);
        tree.writeUInt32BE(right, at + 4);
      }
    }
    const meta = new Encoder(false);
    const entries: Array<[string, () => void]> = [
      ['binary_format_major_version', () => meta.uint16(2)],
      ['binary_format_minor_version', () => meta.uint16(0)],
      ['build_epoch', () => meta.uint64(metadata.buildEpoch)],
      ['database_type', () => meta.value(metadata.databaseType)],
      ['description', () => meta.value(metadata.description)],
      ['ip_version', () => meta.uint16(6)],
      ['languages', () => meta.value(metadata.languages)],
      ['node_count', () => meta.value(nodeCount)],
      ['record_size', () => meta.uint16(recordSize)],
      ...Object.entries(metadata.extra ?? {}).map(
        ([k, v]) => [k, () => meta.value(v)] as [string, () => void],
      ),
    ];
    meta.mapHeader(entries.length);
    for (const [k, write] of entries) {
      meta.value(k);
      write();
    }
    return Buffer.concat([tree, Buffer.alloc(16), data, METADATA_MARKER, meta.out.done()]);
  }
}

/** Bit `i` (0 = most significant) of a 128-bit address held in four 32-bit words. */
function bit(words: ArrayLike<number>, i: number): number {
  return (words[i >>> 5]! >>> (31 - (i & 31))) & 1;
}
