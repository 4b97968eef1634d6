/** Reads a text file (plain or gzip, detected by its magic bytes) as batches of lines. */
import fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import zlib from 'node:zlib';

export interface LineBatch {
  /** Line number (1-based) of lines[0]. */
  firstLine: number;
  lines: string[];
}

export function isGzipFile(file: string): boolean {
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(2);
    const n = fs.readSync(fd, head, 0, 2, 0);
    return n === 2 && head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    fs.closeSync(fd);
  }
}

/** The whole file as text, gunzipped when needed. */
export function readTextFile(file: string): string {
  const raw = fs.readFileSync(file);
  const bytes = raw.length >= 2 && raw[0] === 0x1f && raw[1] === 0x8b ? zlib.gunzipSync(raw) : raw;
  return bytes.toString('utf8');
}

export async function* readLineBatches(file: string, batchSize = 50_000): AsyncGenerator<LineBatch> {
  const stream = fs.createReadStream(file, { highWaterMark: 1 << 20 });
  const source: AsyncIterable<Buffer> = isGzipFile(file) ? stream.pipe(zlib.createGunzip()) : stream;
  const decoder = new StringDecoder('utf8');
  let carry = '';
  let lineNo = 1;
  let batch: string[] = [];
  let batchStart = 1;
  for await (const chunk of source) {
    const text = carry + decoder.write(chunk);
    const parts = text.split('\n');
    carry = parts.pop() ?? '';
    for (const part of parts) {
      batch.push(part.endsWith('\r') ? part.slice(0, -1) : part);
      lineNo++;
      if (batch.length >= batchSize) {
        yield { firstLine: batchStart, lines: batch };
        batch = [];
        batchStart = lineNo;
      }
    }
  }
  carry += decoder.end();
  if (carry.length > 0) batch.push(carry.endsWith('\r') ? carry.slice(0, -1) : carry);
  if (batch.length > 0) yield { firstLine: batchStart, lines: batch };
}

/** The file's bytes (gunzipped when needed) in chunks of about 1 MiB; lines may span chunks. */
export async function* readChunks(file: string): AsyncGenerator<Buffer> {
  const stream = fs.createReadStream(file, { highWaterMark: 1 << 20 });
  const source: AsyncIterable<Buffer> = isGzipFile(file)
    ? stream.pipe(zlib.createGunzip({ chunkSize: 1 << 20 }))
    : stream;
  for await (const chunk of source) yield chunk;
}

/**
 * The file's bytes in chunks of whole lines (about 1 MiB; the last line of the file may lack its
 * newline), each in an ArrayBuffer of its own so that it can be handed to a worker thread.
 * `alloc(n)` may return a recycled buffer of at least n bytes (it gets a view of n bytes).
 */
export async function* readLineChunks(
  file: string,
  alloc: (n: number) => ArrayBuffer = (n) => new ArrayBuffer(n),
): AsyncGenerator<Uint8Array> {
  let carry = new Uint8Array(0);
  for await (const chunk of readChunks(file)) {
    const n = carry.length + chunk.length;
    const bytes = new Uint8Array(alloc(n), 0, n);
    bytes.set(carry);
    bytes.set(chunk, carry.length);
    const end = bytes.lastIndexOf(10) + 1;
    if (end === 0) {
      carry = bytes.slice();
      continue;
    }
    carry = bytes.slice(end);
    yield bytes.subarray(0, end);
  }
  if (carry.length > 0) yield carry;
}
