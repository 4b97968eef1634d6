/**
 * `builder query --file PATH|-`: reads input lines from a file (plain or .gz) or stdin, writes one
 * output line per input to stdout in input order, a progress bar on stderr when it is a terminal.
 * Returns whether every line was answered without an error.
 */
import fs from 'node:fs';
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import zlib from 'node:zlib';
import { warmLookupIp, type Release } from '../shared/queries/index.js';
import { BulkEnricher, type BulkOptions } from './bulk.js';
import { isGzipFile } from './line-reader.js';
import { startProgress, type Progress } from './progress.js';

/** Lines of a byte stream, in batches (the last line may lack its newline). */
export async function* lineBatches(source: AsyncIterable<Buffer>): AsyncGenerator<string[]> {
  const decoder = new StringDecoder('utf8');
  let carry = '';
  for await (const chunk of source) {
    const parts = (carry + decoder.write(chunk)).split('\n');
    carry = parts.pop()!;
    yield parts;
  }
  carry += decoder.end();
  if (carry !== '') yield [carry];
}

/** Output gathered into chunks of about 256 KiB, written with backpressure. */
class ChunkedOutput {
  private buffers: Buffer[] = [];
  private texts: string[] = [];
  private size = 0;

  constructor(private readonly out: Writable) {}

  /** Adds `text`, then `shared` bytes when given (kept by reference until the flush). */
  async add(text: string, shared: Buffer | null = null): Promise<void> {
    if (text !== '') this.texts.push(text);
    this.size += text.length;
    if (shared !== null) {
      this.buffers.push(Buffer.from(this.texts.join('')), shared);
      this.texts = [];
      this.size += shared.length;
    }
    if (this.size >= 1 << 18) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.texts.length > 0) this.buffers.push(Buffer.from(this.texts.join('')));
    if (this.buffers.length === 0) return;
    const chunk = Buffer.concat(this.buffers);
    this.buffers = [];
    this.texts = [];
    this.size = 0;
    if (!this.out.write(chunk)) await once(this.out, 'drain');
  }
}

export interface BulkResult {
  inputs: number;
  failed: number;
}

/** Enriches every line of `source` into `out` (the work of the command, without the process). */
export async function enrichLines(
  release: Release,
  source: AsyncIterable<Buffer>,
  out: Writable,
  options: BulkOptions,
  progress: Progress | null = null,
): Promise<BulkResult> {
  const enricher = new BulkEnricher(release, options);
  await warmLookupIp(release);
  const output = new ChunkedOutput(out);
  await output.add(enricher.header());
  for await (const lines of lineBatches(source)) {
    let bytes = 0;
    for (const raw of lines) {
      bytes += raw.length + 1;
      const [text, shared] = enricher.parts(raw.endsWith('\r') ? raw.slice(0, -1) : raw);
      await output.add(text, shared);
    }
    progress?.tick(bytes);
  }
  await output.flush();
  return { inputs: enricher.inputs, failed: enricher.failed };
}

/** The command: `file` is a path or '-' for stdin. */
export async function bulkCommand(release: Release, file: string, options: BulkOptions): Promise<BulkResult> {
  let source: Readable;
  let total: number | null = null;
  if (file === '-') source = process.stdin;
  else {
    if (!fs.existsSync(file)) throw new Error(`${file}: no such file`);
    const stream = fs.createReadStream(file, { highWaterMark: 1 << 20 });
    const gzip = isGzipFile(file);
    source = gzip ? stream.pipe(zlib.createGunzip()) : stream;
    if (!gzip) total = fs.statSync(file).size;
  }
  // Progress (in input characters) only on a terminal: stdout carries the answers, logs stay clean.
  const progress = process.stderr.isTTY ? startProgress('query', total, 'chars') : null;
  try {
    return await enrichLines(release, source, process.stdout, options, progress);
  } finally {
    progress?.stop();
  }
}
