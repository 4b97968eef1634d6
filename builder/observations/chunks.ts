/**
 * Chunks of observation lines: what the import's worker threads do (scanChunk, pure), the
 * records they hand back (byte ranges and times in typed arrays, transferred between threads),
 * and how the importing thread applies them to the state machine in line order.
 */
import type { DnsStateMachine, ApplyCounts } from '../dns-state/machine.js';
import { hashBytes } from '../../shared/hash.js';
import { ObservationFields } from '../dns-state/observation-fields.js';
import { OUTCOME_CODES } from '../dns-state/outcome-codes.js';
import { parseObservationLine } from './line-parser.js';
import { ObservationLineScanner } from './line-scanner.js';

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
