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
